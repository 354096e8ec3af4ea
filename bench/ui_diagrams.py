"""The web UI's first render of a note with ten Mermaid diagrams (plus inline and display math and a code
block), in Debian's Chromium driven by Playwright, against a real `ragdown serve` (hash embedder).

    .venv/bin/python bench/ui_diagrams.py [--reps 5] [--shots DIR]

Timed from `page.goto` of the note's address to the moment the preview holds ten diagram SVGs and
enhance.js says it is done (`data-enhanced-all`):

- cold: a fresh browser context (empty cache), so Mermaid (5 MB), KaTeX and highlight.js are fetched and
  compiled first;
- warm: the same page, opening a second such note (the libraries are loaded; only the rendering counts);
- a plain note of the same length without diagrams, for comparison.

`--shots DIR` also writes screenshots of the note and of the editor at desktop (1400x1000) and phone
(390x844) widths. Medians of `--reps` runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import write  # noqa: E402
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, start_ui_server  # noqa: E402

DIAGRAM = "```mermaid\ngraph LR\n  A{n}[Start {n}] --> B{n}{{Check}}\n  B{n} -->|yes| C{n}[Done]\n  B{n} -->|no| A{n}\n```\n"


def note(title: str, diagrams: bool) -> str:
    parts = [
        f"# {title}\n\nEuler: $e^{{i\\pi}} + 1 = 0$.\n\n$$\n\\sum_{{k=1}}^n k = \\frac{{n(n+1)}}{{2}}\n$$\n"
    ]
    for n in range(10):
        parts.append(f"## Part {n}\n\nSome text about part {n}.\n\n")
        parts.append(DIAGRAM.replace("{n}", str(n)) if diagrams else f"Plain paragraph {n}.\n")
    parts.append("```python\ndef area(r):\n    return 3.14 * r * r\n```\n")
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--shots", type=Path)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        docs = home / "docs"
        for name, diagrams in [("Ten", True), ("Ten again", True), ("Plain", False)]:
            write(docs, f"bench/{name}.md", note(name, diagrams))
        server = start_ui_server(home, docs)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                init = f"localStorage.setItem('ragdown.token', '{server.token}')"
                done = "n => document.querySelectorAll('#preview .mermaid-diagram svg').length === n && document.querySelector('#preview[data-enhanced-all]')"
                times: dict[str, list[float]] = {"cold": [], "warm": [], "plain": []}
                for _ in range(args.reps):
                    context = browser.new_context(
                        viewport={"width": 1400, "height": 1000}, base_url=server.url
                    )
                    context.add_init_script(init)
                    page = context.new_page()
                    page.goto("/#/f/bench")
                    page.wait_for_selector(".doc-item")
                    for key, path, count in [
                        ("plain", "Plain", 0),
                        ("cold", "Ten", 10),
                        ("warm", "Ten%20again", 10),
                    ]:
                        start = time.perf_counter()
                        page.goto(f"/#/d/bench/{path}.md")
                        page.wait_for_function(done, arg=count, timeout=60_000)
                        times[key].append((time.perf_counter() - start) * 1000)
                    context.close()
                for key, values in times.items():
                    print(
                        f"{key:6} median {statistics.median(values):7.0f} ms  (min {min(values):.0f}, max {max(values):.0f}, n={len(values)})"
                    )
                if args.shots:
                    shots(browser, server, init, args.shots)
                browser.close()
        finally:
            server.stop()


def shots(browser, server, init: str, out: Path) -> None:  # type: ignore[no-untyped-def]
    out.mkdir(parents=True, exist_ok=True)
    for label, size in [
        ("desktop", {"width": 1400, "height": 1000}),
        ("phone", {"width": 390, "height": 844}),
    ]:
        context = browser.new_context(viewport=size, base_url=server.url)
        context.add_init_script(init)
        page = context.new_page()
        page.goto("/#/d/bench/Ten.md")
        page.wait_for_function("() => document.querySelector('#preview[data-enhanced-all]')", timeout=60_000)
        page.screenshot(path=str(out / f"note-{label}.png"))
        page.goto("/#/e/bench/Ten.md")
        page.wait_for_selector("#editor-source")
        page.locator("#editor-source").press("Control+End")
        page.keyboard.type("See [[Pl")
        page.wait_for_selector(".cm-tooltip-autocomplete li")
        page.screenshot(path=str(out / f"editor-{label}.png"))
        (server.docs / "bench/Ten.md").write_text(
            note("Ten", True).replace("Some text about part 9.", "Changed on disk.")
        )
        page.wait_for_selector("#disk-changed-action")
        page.screenshot(path=str(out / f"changed-{label}.png"))
        page.click("#disk-changed-action")
        page.wait_for_selector("#conflict-diff")
        page.screenshot(path=str(out / f"merge-{label}.png"))
        (server.docs / "bench/Ten.md").write_text(note("Ten", True))
        context.close()


if __name__ == "__main__":
    main()
