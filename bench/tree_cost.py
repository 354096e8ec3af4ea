"""What the section tree costs at index time, next to chunking: per 1,000 documents, CPU time; and what one
big document costs (`--big`).

Every document of a corpus is read once; then, in interleaved rounds, the three steps a parse makes from
one shared markdown-it scan are timed on each document: the block scan itself, the chunks
(`chunk_lines`) and the section tree (`tree_of`: outline, oversized splits, merges). Reported per 1,000
documents (the corpus cycled) as median process CPU time over the rounds.

    .venv/bin/python bench/tree_cost.py --corpus obsidian-help --rounds 7

`--big` instead times single big documents, generated here: notes of 1k, 10k and 50k bare headings (`## H<n>`
lines, as the issue that made the tree linear wrote them: 50,000 are 0.49 MB), a log of 50k sections (an H2
with a line of text, a link and a tag, every other one with an H3 below it) and a 4 MiB note of prose,
lists, tables, code, quotes, links and tags (a heading every seven blocks); `--worst` adds 4 MiB of
one-character headings (1,048,574 of them: the most the request limit lets one document hold). Each run is a
fresh process that parses the document (`parse_document`, process CPU) and then indexes it alone in a fresh
folder (`Indexer.sync()` with the `hash` embedder into a fresh SQLite store: parse, embed, write; wall
time), and records the sync's progress events. With `--before SRC` (an older `src/`, e.g.
`git archive <commit> src | tar -x -C /tmp/ragdown-before`) the same runs on that code alternate with this
checkout's, in one sitting; `--before-skip` names documents (comma-separated) not to run there, `--only`
the documents to run at all.

    .venv/bin/python bench/tree_cost.py --big --reps 3 --before /tmp/ragdown-before/src

`--big --curve` instead indexes notes of growing size to show the time grows in proportion: the realistic
note at 0.25, 0.5, 1, 2 and 4 MiB (the last 64 KiB short of the request limit) and bare headings at 6,250,
12,500, 25,000 and 50,000; per size the parse's CPU, the sync's wall and CPU time, its CPU per MiB (or per
1,000 headings) and how that compares with the smallest of the series (1.00x: proportional). `--embedder
minilm` indexes with the local model instead of `hash` (loaded before the clock starts, its threads from
the environment as a server's), `--max-mib` leaves out the larger notes (a model embeds ~10-20 sections a
second here); the sync's progress events then show the sections of the note counted as they are embedded.

    .venv/bin/python bench/tree_cost.py --big --curve --reps 3
    .venv/bin/python bench/tree_cost.py --big --curve --reps 1 --embedder minilm --max-mib 1 --only-notes
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import CORPORA, exit_cleanly_on_sigterm, median, table, write_result
from ragdown.documents.blocks import scan_blocks
from ragdown.documents.chunker import MAX_CHUNK_CHARS, chunk_lines
from ragdown.documents.frontmatter import frontmatter_of_lines
from ragdown.documents.text import normalize_text, split_lines
from ragdown.documents.title import document_title
from ragdown.documents.tree import tree_of

SRC = Path(__file__).resolve().parents[1] / "src"
MIB = 1024 * 1024


def bare_headings(count: int) -> str:
    """`count` H2 headings and nothing else."""
    return "".join(f"## H{i}\n" for i in range(count))


def journal(count: int) -> str:
    """A log: an H1, then `count` H2 entries of one line each (a link, a tag), every other one with an H3."""
    parts = ["# Journal\n\nWhat this is.\n"]
    for i in range(count):
        parts.append(f"## Entry {i}\n\nDid [[thing {i % 7}]] today. #log\n")
        if i % 2:
            parts.append(f"### Detail {i}\n\nMore on it.\n")
    return "\n".join(parts)


def worst_case(size: int) -> str:
    """As many headings as `size` bytes hold: `# 0` to `# 9`, one a line."""
    lines = [f"# {i % 10}\n" for i in range(size // 4)]
    return "".join(lines)[:size]


def realistic_note(size: int, seed: int = 1) -> str:
    """About `size` bytes of a long working note: paragraphs with wikilinks, Markdown links and tags, lists with
    code spans, tables, fenced code, quotes, and a heading (level 2 to 4) every seventh block."""
    rnd = random.Random(seed)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()

    def sentence(n: int = 12) -> str:
        return " ".join(rnd.choice(words) for _ in range(n)).capitalize() + "."

    out = ["---\ntitle: A long note\ntags: [notes, big]\n---\n", "# A long note\n", sentence(30) + "\n"]
    total = sum(len(part) for part in out)
    block = 0
    while total < size:
        block += 1
        parts = [f"{'#' * rnd.randint(2, 4)} Section {block}\n"] if block % 7 == 0 else []
        kind = rnd.random()
        if kind < 0.35:
            prose = " ".join(sentence() for _ in range(rnd.randint(2, 6)))
            parts.append(
                f"{prose} See [[Note {block % 300}]] and [the spec](specs/{block % 40}.md). #topic{block % 30}\n"
            )
        elif kind < 0.55:
            parts.append("\n".join(f"- {sentence(6)} `item{j}`" for j in range(rnd.randint(3, 8))) + "\n")
        elif kind < 0.7:
            rows = "\n".join(
                f"| {rnd.choice(words)} | {j} | {sentence(3)} |" for j in range(rnd.randint(3, 12))
            )
            parts.append(f"| a | b | c |\n| --- | --- | --- |\n{rows}\n")
        elif kind < 0.85:
            body = "\n".join(
                f"def f{j}(x):\n    return x * {j}  # {rnd.choice(words)}" for j in range(rnd.randint(2, 10))
            )
            parts.append(f"```python\n{body}\n```\n")
        else:
            parts.append(f"> {sentence(20)}\n> {sentence(10)}\n")
        text = "\n".join(parts) + "\n"
        out.append(text)
        total += len(text)
    return "\n".join(out)


def big_documents(worst: bool) -> dict[str, str]:
    docs = {
        "1k headings": bare_headings(1_000),
        "10k headings": bare_headings(10_000),
        "50k headings": bare_headings(50_000),
        "50k sections": journal(50_000),
        "4 MiB note": realistic_note(4 * MIB - 64 * 1024),
    }
    if worst:
        docs["4 MiB of headings"] = worst_case(4 * MIB)
    return docs


def curve_documents(max_mib: float, only_notes: bool) -> dict[str, str]:
    """`--curve`: the realistic note by size (MiB), then bare headings by count."""
    docs = {
        f"{mib:g} MiB note": realistic_note(int(mib * MIB) - (64 * 1024 if mib >= 4 else 0))
        for mib in (0.25, 0.5, 1, 2, 4)
        if mib <= max_mib
    }
    if not only_notes:
        docs |= {f"{n:,} headings": bare_headings(n) for n in (6_250, 12_500, 25_000, 50_000)}
    return docs


def child(path: Path) -> None:
    """One run, in its own process: parse the document, then index it alone; one JSON line on stdout."""
    import ragdown
    from ragdown.core.config import Settings
    from ragdown.documents import CHUNKER_VERSION
    from ragdown.documents.parse import parse_document
    from ragdown.embedders import load_configured
    from ragdown.embedders.hash import HashEmbedder
    from ragdown.storage.records import IndexMeta
    from ragdown.storage.sqlite.store import Store
    from ragdown.sync.indexer import Indexer
    from ragdown.sync.report import SyncProgress

    data = path.read_bytes()
    started = time.process_time()
    doc = parse_document(path.name, data)
    parse_cpu = time.process_time() - started
    nodes = doc.tree.count() + 1 if doc.tree is not None else 0
    del doc
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-big-") as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        (docs / path.name).write_bytes(data)
        spec = os.environ.get("RAGDOWN_EMBEDDER", "hash")
        emb = HashEmbedder() if spec == "hash" else load_configured(spec, Settings.from_env())
        store = Store(Path(tmp) / "data", writable=True)
        store.ensure_meta(IndexMeta(emb.name, emb.dim, CHUNKER_VERSION))
        indexer = Indexer(docs, store, emb, folders=False)
        events: list[tuple[float, int, int, int, int]] = []
        wall = time.perf_counter()

        def progress(p: SyncProgress) -> None:
            sections = getattr(p, "sections_done", 0)  # what an older src/ does not count
            events.append(
                (round(time.perf_counter() - wall, 3), p.files_done, p.files_total, p.chunks, sections)
            )

        indexer.add_progress_listener(progress)
        cpu = time.process_time()
        report = indexer.sync()
        sync_cpu = time.process_time() - cpu
        sync_wall = time.perf_counter() - wall
        store.close()
    result = {
        "ragdown": str(Path(ragdown.__file__).parent),
        "embedder": emb.name,
        "bytes": len(data),
        "parse_cpu": parse_cpu,
        "sync_wall": sync_wall,
        "sync_cpu": sync_cpu,
        "chunks": report.chunks,
        "nodes": nodes,
        "progress": events,
    }
    print(json.dumps(result))


def run_child(src: Path, path: Path, embedder: str = "hash") -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src), "RAGDOWN_EMBEDDER": embedder, "RAGDOWN_WATCH": "false"}
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(path)], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"the run on {src} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(result["ragdown"]) != src / "ragdown":
        raise SystemExit(f"the run meant for {src} imported {result['ragdown']}")
    return result


def big(reps: int, before: Path | None, before_skip: set[str], worst: bool, only: set[str]) -> None:
    codes: list[tuple[str, Path]] = [("after", SRC)]
    if before is not None:
        codes.append(("before", before.resolve()))
    rows: list[list[object]] = []
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-bigdocs-") as tmp:
        for name, text in big_documents(worst).items():
            if only and name not in only:
                continue
            path = Path(tmp) / "big.md"
            path.write_text(text, encoding="utf-8")
            runs: dict[str, list[dict[str, Any]]] = {code: [] for code, _ in codes}
            for rep in range(reps):
                order = codes if rep % 2 == 0 else codes[::-1]
                for code, src in order:
                    if code == "before" and name in before_skip:
                        continue
                    result = run_child(src, path)
                    runs[code].append(result)
                    print(
                        f"  {name}, {code}, run {rep + 1}: parse {result['parse_cpu']:.2f} s CPU, "
                        f"index {result['sync_wall']:.2f} s",
                        file=sys.stderr,
                    )
            after = runs["after"]
            was = runs.get("before") or []
            parse_after = median([r["parse_cpu"] for r in after])
            sync_after = median([r["sync_wall"] for r in after])
            parse_before = median([r["parse_cpu"] for r in was]) if was else None
            sync_before = median([r["sync_wall"] for r in was]) if was else None
            if was and (was[-1]["chunks"], was[-1]["nodes"]) != (after[-1]["chunks"], after[-1]["nodes"]):
                raise SystemExit(f"{name}: before and after disagree on chunks or nodes")
            # How long the progress said "0 of 1 files": until the event that counts the file done.
            zero = next((e[0] for e in after[-1]["progress"] if e[1]), None)
            rows.append(
                [
                    name,
                    f"{len(text.encode()) / MIB:.2f} MiB",
                    after[-1]["chunks"],
                    f"{parse_before:.2f}" if parse_before is not None else "(not run)",
                    f"{parse_after:.2f}",
                    f"{sync_before:.2f}" if sync_before is not None else "(not run)",
                    f"{sync_after:.2f}",
                    f"{sync_before / sync_after:.1f}x" if sync_before is not None else "",
                    f"{zero:.2f}" if zero is not None else "",
                ]
            )
            figures[name] = {"runs": runs}
    print(
        f"{reps} runs each (median), one fresh process per run, `hash` embedder; load {os.getloadavg()[0]:.1f}"
    )
    headers = [
        "document",
        "size",
        "chunks",
        "parse before (s CPU)",
        "parse after",
        "index before (s)",
        "index after",
        "index before/after",
        "'0 of 1' for (s, after)",
    ]
    print(table(headers, rows))
    write_result(
        "tree_cost_big", {"reps": reps, "before": str(before) if before else None, "figures": figures}
    )


def curve(reps: int, embedder: str, max_mib: float, only_notes: bool) -> None:
    """`--big --curve`: each document `reps` times (fresh processes, the sizes interleaved within a rep)."""
    documents = curve_documents(max_mib, only_notes)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in documents}
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-curve-") as tmp:
        paths = {}
        for i, (name, text) in enumerate(documents.items()):
            paths[name] = Path(tmp) / f"big{i}.md"
            paths[name].write_text(text, encoding="utf-8")
        for rep in range(reps):
            order = list(documents) if rep % 2 == 0 else list(reversed(documents))
            for name in order:
                result = run_child(SRC, paths[name], embedder)
                runs[name].append(result)
                print(
                    f"  {name}, run {rep + 1}: parse {result['parse_cpu']:.2f} s CPU, index "
                    f"{result['sync_wall']:.2f} s ({result['sync_cpu']:.2f} s CPU), {result['chunks']} chunks",
                    file=sys.stderr,
                    flush=True,
                )
    rows: list[list[object]] = []
    base: dict[str, float] = {}
    for name, text in documents.items():
        done = runs[name]
        series, unit = (
            ("headings", int(name.split()[0].replace(",", "")) / 1000)
            if "headings" in name
            else (
                "notes",
                len(text.encode()) / MIB,
            )
        )
        cpu = median([r["sync_cpu"] for r in done])
        wall = median([r["sync_wall"] for r in done])
        per = cpu / unit
        base.setdefault(series, per)
        moved = [e for e in done[-1]["progress"] if e[1] == 0 and len(e) > 4 and e[4]]
        rows.append(
            [
                name,
                f"{len(text.encode()) / MIB:.2f}",
                done[-1]["chunks"],
                f"{median([r['parse_cpu'] for r in done]):.2f}",
                f"{wall:.2f}",
                f"{cpu:.2f}",
                f"{per:.2f} /{'MiB' if series == 'notes' else '1k headings'}",
                f"{per / base[series]:.2f}x",
                f"{done[-1]['chunks'] / wall:.0f}",
                len(moved),
            ]
        )
    print(
        f"{reps} run(s) each (median), one fresh process per run, `{runs[next(iter(runs))][-1]['embedder']}`; "
        f"load {os.getloadavg()[0]:.1f}"
    )
    headers = [
        "document",
        "MiB",
        "chunks",
        "parse (s CPU)",
        "index (s wall)",
        "index (s CPU)",
        "index CPU per unit",
        "vs the smallest",
        "chunks/s (wall)",
        "progress moves before the file is done",
    ]
    print(table(headers, rows))
    write_result("tree_cost_curve", {"reps": reps, "embedder": embedder, "runs": runs})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="obsidian-help")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--big", action="store_true", help="time single big documents instead (see above)")
    parser.add_argument("--reps", type=int, default=3, help="--big: runs of each document on each code")
    parser.add_argument("--before", type=Path, help="--big: an older src/ to run side by side")
    parser.add_argument(
        "--before-skip", default="", help="--big: documents (comma-separated names) not to run on --before"
    )
    parser.add_argument("--worst", action="store_true", help="--big: add 4 MiB of one-character headings")
    parser.add_argument("--only", default="", help="--big: only these documents (comma-separated names)")
    parser.add_argument("--curve", action="store_true", help="--big: notes of growing size (see above)")
    parser.add_argument("--embedder", default="hash", help="--curve: hash or minilm")
    parser.add_argument("--max-mib", type=float, default=4.0, help="--curve: the largest note (MiB)")
    parser.add_argument("--only-notes", action="store_true", help="--curve: no bare-heading series")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    if args.big and args.curve:
        exit_cleanly_on_sigterm()
        curve(args.reps, args.embedder, args.max_mib, args.only_notes)
        return
    if args.big:
        exit_cleanly_on_sigterm()
        skip = {name.strip() for name in args.before_skip.split(",") if name.strip()}
        only = {name.strip() for name in args.only.split(",") if name.strip()}
        big(args.reps, args.before, skip, args.worst, only)
        return
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
