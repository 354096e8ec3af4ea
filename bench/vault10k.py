"""A synthetic vault of realistic notes (10,000 by default), for the figures at scale (docs/benchmarks.md section 28).

    .venv/bin/python bench/vault10k.py OUT_DIR [--notes 10000] [--seed 24] [--questions N]

Deterministic for a seed. The words are the Obsidian help vault's own (`bench/_common.py`'s corpus), drawn
with their frequencies there, so the vocabulary has the long tail real notes have. Each note sits in
`area-XX/topic-YY/` and has, by chance and in the shares a personal vault shows: YAML front matter (tags,
aliases, a date), one H1, 1-12 sections of H2 (some with H3 under them), paragraphs, bullet and numbered
lists, task lists, fenced code, a table, a callout, `[[wikilinks]]` to other notes (some with a heading or an
alias), `#tags` inline and Markdown links. Sizes are log-normal, median ~3 KB, mean ~4.6 KB, a few up to
~60 KB: 10,000 notes are ~46 MB.

With `--questions N` it also prints N questions as JSON lines (`{"q": ..., "path": ...}`): three to five
words of one section of a note picked at random, the note the answer is in. `ragdown_recall` p50/p95 use them.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
from collections import Counter
from pathlib import Path

from _common import CORPORA

LANGS = ("python", "bash", "js", "yaml", "sql", "")
CALLOUTS = ("note", "tip", "warning", "info", "todo")


def vocabulary() -> tuple[list[str], list[int]]:
    """The Obsidian help vault's words and their counts (a fixed list when the corpus is absent)."""
    counts: Counter[str] = Counter()
    root = CORPORA["obsidian-help"]
    if not root.is_dir():  # a worktree beside the main checkout: the shared corpora sit one level up
        root = Path(__file__).resolve().parents[3] / "shared" / "bench" / "obsidian-help" / "vault"
    if root.is_dir():
        for path in sorted(root.rglob("*.md")):
            counts.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]{1,20}", path.read_text("utf-8")))
    if len(counts) < 500:
        raise SystemExit(f"no Obsidian help vault at {root}: its words are the vocabulary")
    words = sorted(counts, key=lambda w: (-counts[w], w))
    return words, [counts[w] for w in words]


class Writer:
    def __init__(self, seed: int, notes: int) -> None:
        self.rng = random.Random(seed)
        self.words, weights = vocabulary()
        self.cum: list[int] = []
        total = 0
        for w in weights:
            total += w
            self.cum.append(total)
        self.notes = notes
        self.titles = [self._title() for _ in range(notes)]

    def word(self) -> str:
        return self.rng.choices(self.words, cum_weights=self.cum, k=1)[0]

    def words_(self, n: int) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.cum, k=n))

    def _title(self) -> str:
        rare = self.words[self.rng.randrange(50, len(self.words))]
        return f"{self.word().capitalize()} {rare} {self.word()}".strip()

    def sentence(self) -> str:
        text = self.words_(self.rng.randint(6, 22))
        if self.rng.random() < 0.25:
            text += f" [[{self.titles[self.rng.randrange(self.notes)]}]]"
        if self.rng.random() < 0.08:
            text += f" #{self.word()}"
        if self.rng.random() < 0.05:
            text += f" [{self.word()}](https://example.org/{self.word()})"
        return text[0].upper() + text[1:] + "."

    def paragraph(self) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(1, 6)))

    def block(self) -> str:
        r = self.rng.random()
        if r < 0.55:
            return self.paragraph()
        if r < 0.72:
            mark = self.rng.choice(("-", "*", "1."))
            return "\n".join(
                f"{mark} {self.words_(self.rng.randint(3, 12))}" for _ in range(self.rng.randint(2, 7))
            )
        if r < 0.8:
            return "\n".join(
                f"- [{self.rng.choice(' x')}] {self.words_(self.rng.randint(3, 9))}"
                for _ in range(self.rng.randint(2, 5))
            )
        if r < 0.88:
            lang = self.rng.choice(LANGS)
            body = "\n".join(
                f"{self.word()}_{self.word()} = {self.word()}({self.word()})"
                for _ in range(self.rng.randint(2, 10))
            )
            return f"```{lang}\n{body}\n```"
        if r < 0.94:
            cols = self.rng.randint(2, 4)
            head = "| " + " | ".join(self.word().capitalize() for _ in range(cols)) + " |"
            sep = "|" + "---|" * cols
            rows = [
                "| " + " | ".join(self.words_(self.rng.randint(1, 3)) for _ in range(cols)) + " |"
                for _ in range(self.rng.randint(2, 6))
            ]
            return "\n".join([head, sep, *rows])
        return f"> [!{self.rng.choice(CALLOUTS)}]\n> {self.paragraph()}"

    def note(self, i: int) -> str:
        rng = self.rng
        # log-normal size target: median ~3 KB, long tail
        target = min(60_000, int(math.exp(rng.gauss(8.0, 0.9))))
        parts: list[str] = []
        if rng.random() < 0.6:
            tags = ", ".join(sorted({self.word() for _ in range(rng.randint(1, 4))}))
            fm = [f"tags: [{tags}]", f"created: 2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"]
            if rng.random() < 0.3:
                fm.append(f"aliases: [{self.titles[i].split()[1]} {self.word()}]")
            parts.append("---\n" + "\n".join(fm) + "\n---")
        parts.append(f"# {self.titles[i]}")
        parts.append(self.paragraph())
        size = sum(len(p) for p in parts)
        section = 0
        while size < target and section < 40:
            section += 1
            heading = f"## {self.words_(rng.randint(1, 4)).capitalize()}"
            if rng.random() < 0.2:
                heading = f"### {self.words_(rng.randint(1, 4)).capitalize()}"
            parts.append(heading)
            size += len(heading)
            for _ in range(rng.randint(1, 4)):
                b = self.block()
                parts.append(b)
                size += len(b)
        return "\n\n".join(parts) + "\n"


def generate(out: Path, notes: int, seed: int = 24) -> tuple[int, list[Path]]:
    """Write the vault; returns the bytes written and the notes' paths (in order)."""
    writer = Writer(seed, notes)
    total = 0
    paths: list[Path] = []
    for i in range(notes):
        folder = out / f"area-{i % 20:02d}" / f"topic-{(i // 20) % 25:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9 '-]", "", writer.titles[i]) or f"note {i}"
        path = folder / f"{name} {i:05d}.md"
        data = writer.note(i).encode("utf-8")
        path.write_bytes(data)
        total += len(data)
        paths.append(path)
    return total, paths


def questions(out: Path, paths: list[Path], count: int, seed: int = 7) -> list[dict[str, str]]:
    """`count` questions: 3-5 consecutive words of one paragraph of a random note, and that note."""
    rng = random.Random(seed)
    found: list[dict[str, str]] = []
    while len(found) < count:
        path = rng.choice(paths)
        paras = [p for p in path.read_text("utf-8").split("\n\n") if p and p[0].isalpha()]
        if not paras:
            continue
        words = re.findall(r"[a-z][a-z'-]+", rng.choice(paras))
        if len(words) < 5:
            continue
        n = rng.randint(3, 5)
        start = rng.randrange(len(words) - n + 1)
        found.append({"q": " ".join(words[start : start + n]), "path": path.relative_to(out).as_posix()})
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--questions", type=int, default=0)
    args = parser.parse_args()
    total, paths = generate(args.out, args.notes, args.seed)
    print(f"# {len(paths)} notes, {total / 1e6:.1f} MB in {args.out}", flush=True)
    for q in questions(args.out, paths, args.questions):
        print(json.dumps(q))


if __name__ == "__main__":
    main()
