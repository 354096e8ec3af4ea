"""The web UI's first render of a 10,000-document folder, in Debian's Chromium under playwright.

Writes a folder of N documents (default 10,000: 100 subfolders of 99 and 100 at the top level, or all
flat with --flat), starts `ragdown serve` on it (the `hash` embedder), and times, for several page
loads: from navigation to the folder's tree drawn (its count shown), the DOM nodes of the folder pane
then, and the `/api/docs` answer's size. Then opening one subfolder (a click to its documents drawn).

    .venv/bin/python bench/ui_tree_render.py [--docs 10000] [--flat] [--runs 5] [--shots DIR]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

CHROMIUM = os.environ.get("RAGDOWN_TEST_CHROMIUM", "/usr/bin/chromium")


def write_docs(root: Path, count: int, flat: bool) -> None:
    folder = root / "big"
    for n in range(count):
        sub = "" if flat or n < 100 else f"part{(n - 100) // 99:03}/"
        path = folder / f"{sub}note{n:05}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {n}\n\nSome text for note {n}.\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(home: Path, docs: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
    env.update(
        RAGDOWN_EMBEDDER="hash",
        RAGDOWN_WATCH="false",
        RAGDOWN_DOCS_DIR=str(docs),
        RAGDOWN_DATA_DIR=str(home / "data"),
        SECURE_LOCAL_NET="true",
        RAGDOWN_HOST="127.0.0.1",
        PORT=str(port),
        HOME=str(home),
    )
    log = (home / "serve.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "ragdown.cli", "serve"], env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            status = httpx.get(f"{url}/api/status", timeout=2).json()
            if status.get("ready") and status.get("last_sync") and not status.get("syncing"):
                return proc, url
        except (httpx.TransportError, ValueError):
            pass
        time.sleep(0.2)
    proc.terminate()
    raise SystemExit("the server did not finish its first sync")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--flat", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--shots", type=Path, default=None)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        docs = home / "docs"
        write_docs(docs, args.docs, args.flat)
        started = time.monotonic()
        proc, url = serve(home, docs)
        print(f"indexed {args.docs} documents in {time.monotonic() - started:.1f} s")
        size = len(httpx.get(f"{url}/api/docs", params={"folder": "big"}, timeout=60).content)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"{url}/#/")
                page.wait_for_selector(".folder-link")
                times, opens, nodes = [], [], 0
                for _ in range(args.runs):
                    page.goto(f"{url}/#/")
                    page.reload()
                    page.wait_for_selector(".folder-link")
                    t0 = time.perf_counter()
                    page.click(".folder-link[data-folder=big]")
                    page.wait_for_selector(".pane-count")
                    page.wait_for_function(
                        "document.querySelector('.pane-count').textContent.includes('documents')"
                    )
                    times.append((time.perf_counter() - t0) * 1000)
                    nodes = page.evaluate("document.querySelectorAll('#folder-pane *').length")
                    if not args.flat:
                        t1 = time.perf_counter()
                        page.click(".tree-toggle[data-dir=part050]")
                        page.wait_for_selector(".doc-item[data-path^='big/part050/']")
                        opens.append((time.perf_counter() - t1) * 1000)
                if args.shots:
                    page.screenshot(path=str(args.shots / "tree-10000.png"))
                browser.close()
        finally:
            proc.terminate()
            proc.wait()
    print(f"/api/docs answer: {size / 1e6:.2f} MB")
    print(
        f"folder click to tree drawn: median {statistics.median(times):.0f} ms, runs {[round(t) for t in times]}"
    )
    print(f"DOM nodes in the folder pane: {nodes}")
    if opens:
        print(f"open a subfolder of 99: median {statistics.median(opens):.0f} ms")


if __name__ == "__main__":
    main()
