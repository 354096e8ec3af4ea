"""What the section tree costs at index time, next to chunking: per 1,000 documents, CPU time.

Every document of a corpus is read once; then, in interleaved rounds, the three steps a parse makes from
one shared markdown-it scan are timed on each document: the block scan itself, the chunks
(`chunk_lines`) and the section tree (`tree_of`: outline, oversized splits, merges). Reported per 1,000
documents (the corpus cycled) as median process CPU time over the rounds.

    .venv/bin/python bench/tree_cost.py --corpus obsidian-help --rounds 7
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from _common import CORPORA, median, table, write_result
from ragdown.documents.blocks import scan_blocks
from ragdown.documents.chunker import MAX_CHUNK_CHARS, chunk_lines
from ragdown.documents.frontmatter import frontmatter_of_lines
from ragdown.documents.text import normalize_text, split_lines
from ragdown.documents.title import document_title
from ragdown.documents.tree import tree_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="obsidian-help")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    root = CORPORA[args.corpus]
    docs = []
    for path in sorted(root.rglob("*.md")):
        lines = split_lines(normalize_text(path.read_text(encoding="utf-8", errors="replace")))
        front = frontmatter_of_lines(lines)
        docs.append((path.relative_to(root).as_posix(), lines, front.body_start_line - 1, front.data))
    prepared = []
    for rel, lines, body, data in docs:
        scan = scan_blocks(lines, body)
        prepared.append((rel, lines, body, scan, document_title(data.get("title"), scan, rel)))

    def scan_all() -> None:
        for _rel, lines, body, _data in docs:
            scan_blocks(lines, body)

    def chunk_all() -> None:
        for _rel, lines, body, scan, title in prepared:
            chunk_lines(lines, body, scan, title, MAX_CHUNK_CHARS)

    def tree_all() -> None:
        for _rel, lines, body, scan, title in prepared:
            tree_of(lines, body, scan, title)

    steps: dict[str, Callable[[], None]] = {
        "block scan": scan_all,
        "chunks": chunk_all,
        "section tree": tree_all,
    }
    times: dict[str, list[float]] = {name: [] for name in steps}
    for round_no in range(args.rounds):
        order = list(steps) if round_no % 2 == 0 else list(reversed(steps))
        for name in order:
            started = time.process_time()
            steps[name]()
            times[name].append((time.process_time() - started) * 1000 / len(docs) * 1000)
    rows = [[name, f"{median(v):.0f}", f"{min(v):.0f}", f"{max(v):.0f}"] for name, v in times.items()]
    print(
        f"{args.corpus}: {len(docs)} documents, {args.rounds} interleaved rounds; ms of CPU per 1,000 documents"
    )
    print(table(["step", "median", "min", "max"], rows))
    ratio = median(times["section tree"]) / median(times["chunks"])
    print(f"tree / chunks: {ratio:.2f}")
    write_result(
        "tree_cost",
        {"corpus": args.corpus, "documents": len(docs), "ms_per_1000_docs": times, "tree_over_chunks": ratio},
    )


if __name__ == "__main__":
    main()
