"""`ragdown_query` at 10,000 notes: the index's property and link tables answering filters, sorts and pages.

Generates N notes with frontmatter (status, priority, due, tags, a few links), parses them as the indexer
does and writes them to a fresh SQLite index (no embedder: the query reads no vectors), then times each
query shape (median of R runs, `Store.query_documents`, the tool's only store call).

    .venv/bin/python bench/query_cost.py [--notes 10000] [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ragdown.documents.parse import parse_document
from ragdown.storage.query_sql import AllOf, AnyOf, Cond, LinksTo, Prop, SortKey, Tag, Under
from ragdown.storage.records import PendingFile
from ragdown.storage.sqlite.store import Store

STATUSES = ("todo", "doing", "done", "waiting")


def note(i: int) -> str:
    month, day = 1 + i % 12, 1 + i % 28
    links = " ".join(f"[[note-{(i * 7 + k) % 10_000}]]" for k in range(3))
    return (
        f"---\nstatus: {STATUSES[i % 4]}\npriority: {i % 10}\ndue: 2024-{month:02d}-{day:02d}\n"
        f"tags: [project/p{i % 50}, area{i % 7}]\nowner: person{i % 100}\n---\n# Note {i}\n\nSee {links}.\n"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp), writable=True)
        pending = []
        for i in range(args.notes):
            path = f"f{i % 20}/note-{i}.md"
            text = note(i)
            doc = parse_document(path, text)
            pending.append(PendingFile(path, "", len(text), 0, 0, f"h{i}", doc, None))
        started = time.perf_counter()
        for k in range(0, len(pending), 1000):
            store.write_files(pending[k : k + 1000])
        print(f"indexed {args.notes} notes in {time.perf_counter() - started:.1f} s")
        shapes: dict[str, tuple[Cond, tuple[SortKey, ...]]] = {
            "status = done": (Prop("status", "=", "done"), ()),
            "priority >= 8, sort due": (Prop("priority", ">=", 8.0, "n"), (SortKey("due", prop=True),)),
            "due < 2024-03-01 and not done": (
                AllOf((Prop("due", "<", 1709251200.0, "d"), Prop("status", "!=", "done"))),
                (),
            ),
            "tag project (nested)": (Tag("project"), ()),
            "folder f3, sort priority desc": (Under(("f3",)), (SortKey("priority", True, prop=True),)),
            "links to note-42": (LinksTo(("note-42",)), ()),
            "owner contains 'son1' or exists x": (
                AnyOf((Prop("owner", "contains", "son1"), Prop("x", "exists"))),
                (),
            ),
            "everything, sort due, offset 5000": (AllOf(()), (SortKey("due", prop=True),)),
        }
        for name, (where, sort) in shapes.items():
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                total, files, _props = store.query_documents(where, sort, 50, 5000 if "offset" in name else 0)
                times.append((time.perf_counter() - t0) * 1000)
            print(
                f"{name:40s} total {total:6d}  page {len(files):3d}  median {statistics.median(times):7.2f} ms"
            )
        store.close()


if __name__ == "__main__":
    main()
