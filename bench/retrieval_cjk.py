"""Chinese lexical search: CJK bigrams (before) against words from a segmenter, with and without the trigram pass.

Every question of the zh sets (`bench/questions/obsidian-help-zh.{dev,test}.jsonl`) runs through
`Searcher.lexical_pool`, what `ragdown eval --mode lexical` runs, on an index of the Chinese Obsidian vault
(30 notes, in a temporary folder; the `hash` embedder, since nothing here reads a vector). The variants,
each on an index of its own built in this run:

- `bigrams (before)`: `lexical.SEGMENTATION = "bigrams"`, each CJK run as its overlapping bigrams on both
  sides, no substring pass: ragdown before this change;
- `words`: ragdown's tokens now (`lexical.py`: rjieba's words of three or more characters, bigrams and Han
  characters; Chinese stop words dropped from the query), no substring pass (`hybrid.SUBSTRING_PASS`);
- `words + trigram fill`: ragdown now, the trigram table filling a BM25 pool shorter than asked for;
- `words + trigram fused`: the merge not chosen: for every query with CJK, the BM25 and trigram lists fused
  by reciprocal rank (k = 60), whatever their length.

`--candidates a,b,...` adds a row per segmenter put in rjieba's place (the `words + trigram fill`
pipeline; `none` is no segmenter at all: bigrams and characters, no stop words) and a table of what each
costs: the installed size of its distributions, import + dictionary load in a fresh process (median of 5,
the page cache warm) and segmentation speed over the vault's Han runs. The candidates must be importable:
install each with `pip install --target DIR PKG` and put the folders on `PYTHONPATH`.
`--ablation` adds a row per rule taken out of `words + trigram fill` (the query's Chinese stop words; the Han
characters, on both sides). `--english` runs the first three variants on the English Obsidian vault and
its question sets, with the index's time and size. `--copies N` also indexes N copies of the vault per variant and reports the index time, the size of the
index file and the latency of `lexical_pool` (each question 5 times).

    .venv/bin/python bench/retrieval_cjk.py [--sets dev,test] [--ablation] [--english]
        [--candidates rjieba,jieba,icu,none] [--copies 40]
"""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import ragdown.search.hybrid as hybrid
import ragdown.storage.lexical as lexical
import retrieval_common as rc
from _common import exit_cleanly_on_sigterm
from ragdown.evaluation.metrics import grade
from ragdown.evaluation.questions import Question, load_questions
from ragdown.evaluation.runner import indexed, run_questions
from ragdown.search.hybrid import Searcher, SearchOptions
from ragdown.search.query import fts_match, substring_match
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.sqlite.store import DB_NAME

TOP_K = 10
RRF_K = 60

Cut = Callable[[str], list[str]]


# -- the segmenters compared: (distributions, the code that loads one and gives its cut) ----------------

CANDIDATES: dict[str, tuple[tuple[str, ...], str]] = {
    "rjieba": (("rjieba",), "import rjieba\ncut = rjieba.cut"),
    "jieba": (
        ("jieba",),
        "import jieba, logging\njieba.setLogLevel(logging.WARNING)\njieba.initialize()\ncut = jieba.lcut",
    ),
    "jieba-search": (
        ("jieba",),
        "import jieba, logging\njieba.setLogLevel(logging.WARNING)\njieba.initialize()\n"
        "cut = jieba.lcut_for_search",
    ),
    "jieba-fast-dat": (
        ("jieba-fast-dat",),
        "import jieba_fast_dat as j, logging\nj.setLogLevel(logging.WARNING)\nj.initialize()\ncut = j.lcut",
    ),
    "icu": (
        ("icukit-pyicu",),
        "import icu\n_bi = icu.BreakIterator.createWordInstance(icu.Locale('zh'))\n"
        "def cut(t):\n    _bi.setText(t); out, s = [], _bi.first()\n"
        "    for e in _bi:\n        out.append(t[s:e]); s = e\n    return out",
    ),
    "lindera": (
        ("lindera-python-cjk",),
        "import lindera\n_t = lindera.TokenizerBuilder().set_dictionary('embedded://cc-cedict').build()\n"
        "def cut(t):\n    return [x.surface for x in _t.tokenize(t)]",
    ),
    "sudachipy": (
        ("sudachipy", "sudachidict-core"),
        "from sudachipy import Dictionary, SplitMode\n_t = Dictionary(dict='core').create(SplitMode.A)\n"
        "def cut(t):\n    return [m.surface() for m in _t.tokenize(t)]",
    ),
    "fugashi": (
        ("fugashi", "unidic-lite"),
        "import fugashi\n_t = fugashi.Tagger()\ndef cut(t):\n    return [w.surface for w in _t(t)]",
    ),
    "tinysegmenter": (
        ("tinysegmenter",),
        "import tinysegmenter\n_t = tinysegmenter.TinySegmenter()\ncut = _t.tokenize",
    ),
}


def load_cut(name: str) -> Cut:
    namespace: dict[str, Any] = {}
    exec(CANDIDATES[name][1], namespace)  # the candidates' own loading code, above
    return namespace["cut"]  # type: ignore[no-any-return]


def installed_mb(dists: Sequence[str]) -> float | None:
    total = 0
    for dist in dists:
        try:
            files = metadata.files(dist) or []
        except metadata.PackageNotFoundError:
            return None
        total += sum(p.stat().st_size for f in files if (p := Path(str(f.locate()))).is_file())
    return total / 1e6


def cold_load_s(name: str, rounds: int = 5) -> float:
    """Import + dictionary load + a first cut, in a fresh interpreter (median of `rounds`)."""
    code = (
        "import time\nt = time.perf_counter()\n"
        + CANDIDATES[name][1]
        + "\ncut('测试文本更改默认附件储存位置')\nprint(time.perf_counter() - t)"
    )
    times = []
    for _ in range(rounds):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def han_runs(corpus: Path) -> list[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(corpus.rglob("*.md")))
    return re.findall("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+", text)


def chars_per_s(cut: Cut, runs: Sequence[str], seconds: float = 1.0) -> float:
    chars = sum(len(r) for r in runs)
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for run in runs:
            cut(run)
        done += chars
    return done / (time.perf_counter() - start)


# -- the variants ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def variant(
    segmentation: lexical.Segmentation, substrings: bool, cut: Cut | str | None = "rjieba"
) -> Iterator[None]:
    """ragdown's lexical rules set as asked, and put back after (`cut`: a segmenter, None for none)."""
    saved = (lexical.SEGMENTATION, hybrid.SUBSTRING_PASS, lexical._cut, lexical._missing)
    lexical.SEGMENTATION = segmentation
    hybrid.SUBSTRING_PASS = substrings
    if cut is None:
        lexical._cut, lexical._missing = None, True
    elif not isinstance(cut, str):
        lexical._cut, lexical._missing = cut, False
    try:
        yield
    finally:
        lexical.SEGMENTATION, hybrid.SUBSTRING_PASS, lexical._cut, lexical._missing = saved


def fused_pool(searcher: Searcher, query: str, flt: FileFilter, size: int) -> list[tuple[int, float]]:
    """The merge not chosen: BM25 and trigram lists fused by reciprocal rank for every query with CJK."""
    if not lexical.has_cjk(query):
        return Searcher.lexical_pool(searcher, query, flt, size)
    match, sub = fts_match(query), substring_match(query)
    words = searcher.store.bm25(match, flt, size, hybrid.BM25_WEIGHTS) if match else []
    grams = searcher.store.substrings(sub, flt, size, hybrid.BM25_WEIGHTS) if sub else []
    scores: dict[int, float] = {}
    for pool in (words, grams):
        for rank, (cid, _) in enumerate(pool):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores.items(), key=lambda kv: -kv[1])[:size]


VARIANTS: list[tuple[str, lexical.Segmentation, bool, bool]] = [
    ("bigrams (before)", "bigrams", False, False),
    ("words", "words", False, False),
    ("words + trigram fill (ragdown)", "words", True, False),
    ("words + trigram fused (RRF)", "words", True, True),
]


# Each of ragdown's CJK rules taken out in turn (from `words + trigram fill`).
ABLATIONS: list[tuple[str, list[tuple[str, Any]]]] = [
    ("- Chinese stop words", [("STOP_WORDS", frozenset())]),
    ("- Han characters (both sides)", [("_han_chars", lambda piece: [])]),
]


@contextlib.contextmanager
def patched(changes: Sequence[tuple[str, Any]]) -> Iterator[None]:
    saved = [(name, getattr(lexical, name)) for name, _ in changes]
    try:
        for name, value in changes:
            setattr(lexical, name, value)
        yield
    finally:
        for name, value in saved:
            setattr(lexical, name, value)


def evaluate(searcher: Searcher, questions: list[Question]) -> dict[str, Any]:
    ran = run_questions(searcher, questions, "lexical", SearchOptions(top_k=TOP_K))
    report = grade(questions, ran.results(), "lines")
    return {
        "overall": report.overall.as_dict(),
        "by_type": {t: s.top1 for t, s in report.by_type.items()},
        "ranks": report.ranks,
    }


def copies_of(corpus: Path, n: int, into: Path) -> Path:
    for i in range(n):
        shutil.copytree(corpus, into / f"copy-{i:03d}")
    return into


def sizes_mb(engine: Any) -> dict[str, float]:
    """The index file, and its word FTS and trigram tables (SQLite's `dbstat`, where it is compiled in)."""
    store = engine.require_store()
    out = {"file": sum(p.stat().st_size for p in store.path.parent.glob(DB_NAME + "*")) / 1e6}
    with contextlib.suppress(Exception):
        for name in ("chunks_fts", "chunks_tri"):
            row = store._reader().execute(
                "SELECT sum(pgsize) FROM dbstat WHERE name = ? OR name LIKE ?", (name, name + "_%")
            )
            out[name] = (row.fetchone()[0] or 0) / 1e6
    return out


def latency_ms(searcher: Searcher, questions: list[Question], rounds: int = 5) -> tuple[float, float]:
    times: list[float] = []
    flt = FileFilter()
    for _ in range(rounds):
        for q in questions:
            start = time.perf_counter()
            searcher.lexical_pool(q.question, flt, 4 * TOP_K)
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    exit_cleanly_on_sigterm()
    ap = rc.parser(__doc__)
    ap.add_argument("--sets", default="dev,test", help="question sets of obsidian-help-zh (default dev,test)")
    ap.add_argument("--candidates", default="", help="segmenters to compare, e.g. rjieba,jieba,icu,none")
    ap.add_argument("--copies", type=int, default=0, help="also measure cost on N copies of the vault")
    ap.add_argument("--ablation", action="store_true", help="also each CJK rule taken out in turn")
    ap.add_argument("--english", action="store_true", help="also the English vault: unchanged? what it costs")
    args = ap.parse_args()
    s = rc.settings(args.models)
    embedder, why = rc.load(s, "hash")
    if embedder is None:
        raise SystemExit(f"hash: {why}")
    sets = {
        name: load_questions(rc.QUESTIONS_DIR / f"obsidian-help-zh.{name}.jsonl")
        for name in args.sets.split(",")
    }
    machine = rc.machine()
    print(rc.machine_line(machine))
    rows: list[dict[str, Any]] = []

    def run(
        label: str,
        segmentation: lexical.Segmentation,
        substrings: bool,
        fused: bool,
        cut: Any,
        without: Sequence[tuple[str, Any]] = (),
    ) -> None:
        with (
            variant(segmentation, substrings, cut),
            patched(without),
            indexed(s, rc.OBSIDIAN_ZH, embedder) as (engine, _),
        ):
            searcher = engine.require_searcher()
            if fused:
                searcher.lexical_pool = functools.partial(fused_pool, searcher)  # type: ignore[method-assign]
            rows.append({"variant": label, **{name: evaluate(searcher, qs) for name, qs in sets.items()}})

    for label, segmentation, substrings, fused in VARIANTS:
        run(label, segmentation, substrings, fused, "rjieba")
    if args.ablation:
        for label, without in ABLATIONS:
            run(label, "words", True, False, "rjieba", without)
    costs: list[dict[str, Any]] = []
    runs = han_runs(rc.OBSIDIAN_ZH)
    for name in [c for c in args.candidates.split(",") if c]:
        if name == "none":
            run("words + fill, no segmenter", "words", True, False, None)
            continue
        try:
            cut = load_cut(name)
        except ImportError as err:
            print(f"{name}: not importable ({err}), left out")
            continue
        run(f"words + fill, {name}", "words", True, False, cut)
        costs.append(
            {
                "segmenter": name,
                "installed_mb": installed_mb(CANDIDATES[name][0]),
                "load_s": cold_load_s(name),
                "chars_per_s": chars_per_s(cut, runs),
            }
        )
    headers = ["variant"]
    for name, qs in sets.items():
        headers += [f"{name} ({len(qs)}) top-1", "recall@5", "MRR"]
    table = []
    for row in rows:
        cells = [row["variant"]]
        for name in sets:
            o = row[name]["overall"]
            cells += [rc.pct(o["top1"]), rc.pct(o["r@5"]), f"{o['mrr']:.3f}"]
        table.append(cells)
    print(rc.md_table(headers, table))
    for name in sets:
        types = sorted({t for row in rows for t in row[name]["by_type"]})
        print(f"\ntop-1 by type, {name}:")
        print(
            rc.md_table(
                ["variant", *types],
                [[r["variant"], *(rc.pct(r[name]["by_type"].get(t, 0.0)) for t in types)] for r in rows],
            )
        )
    if costs:
        print()
        print(
            rc.md_table(
                ["segmenter", "installed", "import + load (fresh process)", "speed (Han chars/s)"],
                [
                    [
                        c["segmenter"],
                        "?" if c["installed_mb"] is None else f"{c['installed_mb']:.1f} MB",
                        f"{c['load_s'] * 1000:.0f} ms",
                        f"{c['chars_per_s'] / 1e6:.2f} M",
                    ]
                    for c in costs
                ],
            )
        )
    scale: list[dict[str, Any]] = []
    if args.copies:
        dev = next(iter(sets.values()))
        with tempfile.TemporaryDirectory(prefix="ragdown-cjk-copies-") as tmp:
            corpus = copies_of(rc.OBSIDIAN_ZH, args.copies, Path(tmp))
            for label, segmentation, substrings, _fused in VARIANTS[:3]:
                with variant(segmentation, substrings), indexed(s, corpus, embedder) as (engine, report):
                    p50, p95 = latency_ms(engine.require_searcher(), dev)
                    scale.append(
                        {
                            "variant": label,
                            "chunks": engine.require_store().counts(FileFilter())[1],
                            "index_s": report["ms"] / 1000,
                            "mb": sizes_mb(engine),
                            "p50_ms": p50,
                            "p95_ms": p95,
                        }
                    )
        print(
            f"\n{args.copies} copies of the vault, lexical_pool of {len(dev)} questions x 5, pool {4 * TOP_K}:"
        )
        print(
            rc.md_table(
                ["variant", "chunks", "index", "index file", "words FTS", "trigram table", "p50", "p95"],
                [
                    [
                        r["variant"],
                        r["chunks"],
                        f"{r['index_s']:.1f} s",
                        f"{r['mb']['file']:.1f} MB",
                        f"{r['mb'].get('chunks_fts', float('nan')):.1f} MB",
                        f"{r['mb'].get('chunks_tri', float('nan')):.1f} MB",
                        f"{r['p50_ms']:.2f} ms",
                        f"{r['p95_ms']:.2f} ms",
                    ]
                    for r in scale
                ],
            )
        )
    english: list[dict[str, Any]] = []
    if args.english:
        for name in ("dev", "test"):
            qs = load_questions(rc.QUESTIONS_DIR / f"obsidian-help.{name}.jsonl")
            for label, segmentation, substrings, _fused in VARIANTS[:3]:
                with variant(segmentation, substrings), indexed(s, rc.OBSIDIAN, embedder) as (engine, report):
                    o = evaluate(engine.require_searcher(), qs)["overall"]
                    english.append(
                        {
                            "set": name,
                            "variant": label,
                            **o,
                            "index_s": report["ms"] / 1000,
                            "mb": sizes_mb(engine),
                        }
                    )
        print("\nthe English Obsidian help vault (173 notes), lexical only:")
        print(
            rc.md_table(
                [
                    "set",
                    "variant",
                    "top-1",
                    "recall@5",
                    "MRR",
                    "index",
                    "index file",
                    "words FTS",
                    "trigram table",
                ],
                [
                    [
                        e["set"],
                        e["variant"],
                        rc.pct(e["top1"]),
                        rc.pct(e["r@5"]),
                        f"{e['mrr']:.3f}",
                        f"{e['index_s']:.2f} s",
                        f"{e['mb']['file']:.1f} MB",
                        f"{e['mb'].get('chunks_fts', float('nan')):.2f} MB",
                        f"{e['mb'].get('chunks_tri', float('nan')):.2f} MB",
                    ]
                    for e in english
                ],
            )
        )
    data = {
        "machine": machine,
        "top_k": TOP_K,
        "rows": rows,
        "costs": costs,
        "scale": scale,
        "english": english,
    }
    print(f"\nwritten {rc.write_json(args.json, 'retrieval_cjk', data)}")


if __name__ == "__main__":
    main()
