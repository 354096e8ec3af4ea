"""Issue 23's ranking levers for English, measured on cached pools: a section's place in its page, links as
evidence, query-type routing, with minilm and today's default fusion, per question set and type.

Each question's two pools (40 each, the pools of a 10-hit search) are fetched once; every row re-ranks the
default ranking's first 40 (`Searcher.rank`, score fusion, `FUSION_RULE`), so a lever costs no re-index.

* `ancestors a`: each candidate in the fused top 10 lends `a` × its score to the sections above it in its page
  (its ancestors by breadcrumb, the page's introduction first among them), read from the index when not
  candidates: a question about a page's subject, matched by several of its subsections, lifts the page's
  introduction.
* `links g`: each of the first three hits lends `g` × its score to the best section (by cosine) of every
  note it wikilinks to, scaled by that section's cosine over the best cosine: the answer behind a link in a
  matching passage.
* `follow 3`: today's `RAGDOWN_FOLLOW_LINKS=3` (the linked notes' best two sections placed after each hit).
* Link-evidence variants (`search/evidence.py`'s switches, applied to the shipped ranking): `anchor`, a
  `[[Page#Heading]]` link lends to that heading's section; `novelty g b`, a link's lift is `g × (b + n)` ×
  the source's score, n the share of the query's terms the source lacks that the linked section holds;
  `skip named`, a note the query names by alias lends nothing; `idf`, n weighs each term by its rarity.
  `BM25 cap c`: score fusion's BM25 share for a prose query at most c (`FusionRule.high`, 0.8 now).
* `asking clause w` (`--ask`): a compound question's last clause (`query.ask_clause`) ranked as a query of
  its own and added, its best hit gaining `w` × the whole question's best (`hybrid.ASK_WEIGHT`, 0.5 ships).
* `route`: a question-style query (a question word, 6 words or more) caps BM25's share at 0.4; a keyword
  query (3 words or fewer, no question word) gives it 0.8.

Sets: the four development sets of `retrieval_fusion.py`, `obsidian-help.hard.dev.jsonl` (page
overviews, paraphrases, identifiers, aliases, answers behind a wikilink) and
`obsidian-help.wikilink2.dev.jsonl` (14 more answers behind a wikilink, "context; question", written after
section 44's asking clause shipped and before any ranking of them was seen); `--test`: the held-out sets.

    .venv/bin/python bench/retrieval_levers.py [--test] [--quick | --new | --ask] [--keep DIR]
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import retrieval_common as rc
from ragdown.documents import find_links
from ragdown.evaluation.questions import Question, load_questions
from ragdown.evaluation.runner import ranked
from ragdown.search import evidence, hybrid
from ragdown.search.hybrid import FUSION_RULE, Hit, Pools, Searcher, SearchOptions, pool_size
from ragdown.search.linking import folder_resolver
from ragdown.storage.filter_sql import FileFilter
from retrieval_fusion import QuestionSet, evaluate, print_set, question_sets

TOP_K = 10
QUICK = False  # --quick: only the rows before and now
NEW_ONLY = False  # --new: the link-evidence variants and BM25 caps, not section 29's levers
ASK_ONLY = False  # --ask: the asking clause's weights (section 44), no other lever
ASK_WEIGHTS = (0.0, 0.3, 0.5, 0.7, 1.0)
POOL = pool_size(TOP_K)
QUESTION_WORDS = re.compile(
    r"^(what|how|why|when|where|which|who|can|could|is|are|does|do|should|i|my|is there)\b", re.I
)

Lever = Callable[[Searcher, Question, Pools, list[Hit]], list[Hit]]


@contextlib.contextmanager
def evidence_off() -> Iterator[None]:
    """While open, score fusion lends no page or link evidence (`search/evidence.py`) and adds nothing for a
    compound question's last clause (`hybrid.ASK_WEIGHT`): the ranking before issue 23."""
    saved = evidence.PAGE_LIFT, evidence.LINK_LIFT, hybrid.ASK_WEIGHT
    evidence.PAGE_LIFT = evidence.LINK_LIFT = hybrid.ASK_WEIGHT = 0.0
    try:
        yield
    finally:
        evidence.PAGE_LIFT, evidence.LINK_LIFT, hybrid.ASK_WEIGHT = saved


@contextlib.contextmanager
def ask_weight(weight: float) -> Iterator[None]:
    """While open, a compound question's last clause adds its ranking at `weight` (`hybrid.ASK_WEIGHT`)."""
    saved = hybrid.ASK_WEIGHT
    hybrid.ASK_WEIGHT = weight
    try:
        yield
    finally:
        hybrid.ASK_WEIGHT = saved


def ranked_all(searcher: Searcher, q: Question, pools: Pools, share: float | None = None) -> list[Hit]:
    rule = FUSION_RULE
    if share is not None:
        rule = replace(FUSION_RULE, base=share, coverage=0.0, agreement=0.0, low=share, high=share)
    return searcher.rank(q.question, pools, FileFilter(), SearchOptions(top_k=POOL, fusion="score"), rule)


def rescore(searcher: Searcher, pools: Pools, hits: list[Hit], extra: dict[int, float]) -> list[Hit]:
    """`hits` with `extra` added to their scores (and chunks not among them added), best first."""
    by_id = {h.chunk.id: h for h in hits}
    missing = [cid for cid in extra if cid not in by_id]
    if missing:
        records = searcher.store.chunks_by_id(missing)
        cos = (
            searcher.matrix.cosine(pools.qvec, missing) if pools.qvec is not None and searcher.matrix else {}
        )
        for cid in missing:
            if cid in records:
                by_id[cid] = Hit(records[cid], float(cos.get(cid, 0.0)), 0.0, ("evidence",))
    out = [replace(h, score=h.score + extra.get(cid, 0.0)) for cid, h in by_id.items()]
    return sorted(out, key=lambda h: -h.score)


def ancestors(alpha: float, top: int = TOP_K) -> Lever:
    def lever(searcher: Searcher, q: Question, pools: Pools, hits: list[Hit]) -> list[Hit]:
        extra: dict[int, float] = {}
        sections: dict[int, list[tuple[int, str]]] = {}
        for h in hits[:top]:
            fid = h.chunk.file.id
            if fid not in sections:
                ids = [cid for cid, _ in searcher.store.chunk_ids_of_files([fid])]
                recs = searcher.store.chunks_by_id(ids)
                sections[fid] = [(cid, r.breadcrumb) for cid, r in recs.items()]
            crumb = h.chunk.breadcrumb
            for cid, other in sections[fid]:
                if cid != h.chunk.id and crumb.startswith(other + " › "):
                    extra[cid] = extra.get(cid, 0.0) + alpha * h.score
        return rescore(searcher, pools, hits, extra)

    return lever


def names_title(query: str, title: str) -> bool:
    words = re.findall(r"\w+", title.lower())
    said = set(re.findall(r"\w+", query.lower()))
    return bool(words) and all(w in said or w.rstrip("s") in said or w + "s" in said for w in words)


def titled(alpha: float, top: int = TOP_K) -> Lever:
    """`ancestors`, only into the introduction of a page whose title the query names (all its words)."""

    def lever(searcher: Searcher, q: Question, pools: Pools, hits: list[Hit]) -> list[Hit]:
        extra: dict[int, float] = {}
        intros: dict[int, int | None] = {}
        for h in hits[:top]:
            rec = h.chunk.file
            title = h.chunk.breadcrumb.split(" › ")[0]
            if not names_title(q.question, title):
                continue
            if rec.id not in intros:
                ids = [cid for cid, _ in searcher.store.chunk_ids_of_files([rec.id])]
                recs = searcher.store.chunks_by_id(ids)
                root = [cid for cid, r in recs.items() if " › " not in r.breadcrumb]
                intros[rec.id] = root[0] if root else None
            intro = intros[rec.id]
            if intro is not None and intro != h.chunk.id:
                extra[intro] = extra.get(intro, 0.0) + alpha * h.score
        return rescore(searcher, pools, hits, extra)

    return lever


def links(gamma: float, sources: int = 3) -> Lever:
    def lever(searcher: Searcher, q: Question, pools: Pools, hits: list[Hit]) -> list[Hit]:
        if pools.qvec is None or searcher.matrix is None:
            return hits
        best_cos = max((h.similarity for h in hits), default=1.0) or 1.0
        extra: dict[int, float] = {}
        for h in hits[:sources]:
            folder = h.chunk.folder
            strip = len(folder) + 1 if folder else 0
            resolver = folder_resolver(searcher.store, folder)
            for link in find_links(h.chunk.text):
                if link.kind != "wiki" or link.embed:
                    continue
                resolved = resolver.resolve(link.target, h.chunk.path[strip:])
                if resolved is None:
                    continue
                full = (folder + "/" if folder else "") + resolved.path
                record = searcher.store.get_file(full)
                if record is None or full == h.chunk.path:
                    continue
                ids = [cid for cid, _ in searcher.store.chunk_ids_of_files([record.id])]
                sims = searcher.matrix.cosine(pools.qvec, ids)
                if not sims:
                    continue
                cid, sim = max(sims.items(), key=lambda kv: kv[1])
                extra[cid] = max(extra.get(cid, 0.0), gamma * h.score * max(0.0, sim) / best_cos)
        return rescore(searcher, pools, hits, extra)

    return lever


def route(searcher: Searcher, q: Question, pools: Pools, hits: list[Hit]) -> list[Hit]:
    words = q.question.split()
    asks = bool(QUESTION_WORDS.match(q.question.strip())) or q.question.rstrip().endswith("?")
    if asks and len(words) >= 6:
        share = searcher.lexical_share(q.question, pools)
        if share > 0.4:
            return ranked_all(searcher, q, pools, 0.4)
    elif not asks and len(words) <= 3:
        return ranked_all(searcher, q, pools, 0.8)
    return hits


def chain(*levers: Lever) -> Lever:
    def lever(searcher: Searcher, q: Question, pools: Pools, hits: list[Hit]) -> list[Hit]:
        for one in levers:
            hits = one(searcher, q, pools, hits)
        return hits

    return lever


LEVERS: list[tuple[str, Lever]] = [
    ("ancestors 0.1", ancestors(0.1)),
    ("ancestors 0.2", ancestors(0.2)),
    ("ancestors 0.3", ancestors(0.3)),
    ("ancestors 0.2, top 5", ancestors(0.2, 5)),
    ("links 0.3", links(0.3)),
    ("links 0.5", links(0.5)),
    ("links 0.8", links(0.8)),
    ("route", route),
    ("titled 0.1", titled(0.1)),
    ("titled 0.2", titled(0.2)),
    ("titled 0.3", titled(0.3)),
    ("links 0.2", links(0.2)),
    ("links 0.3, 5 sources", links(0.3, 5)),
    ("titled 0.2 + links 0.3", chain(titled(0.2), links(0.3))),
    ("titled 0.1 + links 0.3", chain(titled(0.1), links(0.3))),
    ("ancestors 0.2 + links 0.5", chain(ancestors(0.2), links(0.5))),
]


@contextlib.contextmanager
def evidence_set(**switches: Any) -> Iterator[None]:
    """While open, `search/evidence.py`'s module switches take the given values."""
    saved = {name: getattr(evidence, name) for name in switches}
    for name, value in switches.items():
        setattr(evidence, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(evidence, name, value)


def idf_novelty(store: Any) -> Callable[[list[str], set[str], Any, int], float]:
    """`evidence._novelty` with each term weighed by log(1 + 300 / its chunk count, at most 300)."""
    cache: dict[str, float] = {}

    def idf(term: str) -> float:
        if term not in cache:
            n = len(store.bm25('"' + term.replace('"', '""') + '"', FileFilter(), 300, (1.0, 1.0, 1.0)))
            cache[term] = math.log(1 + 300 / max(n, 1))
        return cache[term]

    def novelty(terms: list[str], said: set[str], st: Any, cid: int) -> float:
        missing = [t for t in terms if t not in said]
        rec = st.chunks_by_id([cid]).get(cid) if missing else None
        if rec is None:
            return 0.0
        total = sum(idf(t) for t in missing)
        return sum(idf(t) for t in evidence._held(missing, rec)) / total if total else 0.0

    return novelty


# label, `evidence` switches, BM25 cap (None: the default rule), IDF-weighted novelty
EVIDENCE_VARIANTS: list[tuple[str, dict[str, Any], float | None, bool]] = [
    ("links: anchor", {"LINK_ANCHOR": True}, None, False),
    ("links: skip named", {"LINK_SKIP_NAMED": True}, None, False),
    (
        "links: novelty 0.6 0.3, skip named",
        {"LINK_LIFT": 0.6, "LINK_NOVELTY": 1.0, "LINK_BASE": 0.3, "LINK_SKIP_NAMED": True},
        None,
        False,
    ),
    (
        "links: novelty 1.0 0.3, skip named",
        {"LINK_LIFT": 1.0, "LINK_NOVELTY": 1.0, "LINK_BASE": 0.3, "LINK_SKIP_NAMED": True},
        None,
        False,
    ),
    (
        "links: novelty 1.2 0.3, skip named",
        {"LINK_LIFT": 1.2, "LINK_NOVELTY": 1.0, "LINK_BASE": 0.3, "LINK_SKIP_NAMED": True},
        None,
        False,
    ),
    (
        "links: novelty 1.2 0.3, anchor",
        {"LINK_LIFT": 1.2, "LINK_NOVELTY": 1.0, "LINK_BASE": 0.3, "LINK_ANCHOR": True},
        None,
        False,
    ),
    (
        "links: idf novelty 1.0 0.3, skip named",
        {"LINK_LIFT": 1.0, "LINK_NOVELTY": 1.0, "LINK_BASE": 0.3, "LINK_SKIP_NAMED": True},
        None,
        True,
    ),
    ("BM25 cap 0.7", {}, 0.7, False),
    ("BM25 floor 0.1", {}, -0.1, False),
]


def run_set(searcher: Searcher, qs: QuestionSet) -> list[dict[str, Any]]:
    flt = FileFilter()
    answerable = [q for q in qs.questions if q.golds]
    sub = QuestionSet(qs.name, qs.corpus, answerable, qs.rule)
    pools = {q.id: searcher.pools(q.question, flt, POOL) for q in answerable}
    with evidence_off():
        base = {q.id: ranked_all(searcher, q, pools[q.id]) for q in answerable}
        follow = {
            q.id: searcher.search(q.question, flt, SearchOptions(top_k=TOP_K, fusion="score", follow_links=3))
            for q in answerable
        }
    shipped = {q.id: ranked_all(searcher, q, pools[q.id])[:TOP_K] for q in answerable}
    rows = [
        evaluate(
            sub,
            "BM25 alone",
            lambda q: ranked(searcher, q.question, "lexical", SearchOptions(top_k=TOP_K), flt),
        ),
        evaluate(
            sub,
            "dense alone",
            lambda q: ranked(searcher, q.question, "dense", SearchOptions(top_k=TOP_K), flt),
        ),
        evaluate(sub, "before (score, FusionRule)", lambda q: base[q.id][:TOP_K]),
        evaluate(
            sub, f"**now: page 0.1 + links 0.3 + asking clause {hybrid.ASK_WEIGHT}**", lambda q: shipped[q.id]
        ),
        evaluate(sub, "follow 3 (RAGDOWN_FOLLOW_LINKS)", lambda q: follow[q.id]),
    ]
    for weight in ASK_WEIGHTS if ASK_ONLY else ():
        with ask_weight(weight):
            variant = {q.id: ranked_all(searcher, q, pools[q.id])[:TOP_K] for q in answerable}

        def asked(q: Question, variant: dict[str, list[Hit]] = variant) -> list[Hit]:
            return variant[q.id]

        rows.append(evaluate(sub, f"asking clause {weight}", asked))
    for label, switches, cap, idf in [] if QUICK or ASK_ONLY else EVIDENCE_VARIANTS:
        rule = FUSION_RULE
        if cap is not None:
            rule = replace(FUSION_RULE, high=cap) if cap > 0 else replace(FUSION_RULE, low=-cap)
        if idf:
            switches = {**switches, "_novelty": idf_novelty(searcher.store)}
        opts = SearchOptions(top_k=TOP_K, fusion="score")
        with evidence_set(**switches):
            variant = {q.id: searcher.rank(q.question, pools[q.id], flt, opts, rule) for q in answerable}

        def cached(q: Question, variant: dict[str, list[Hit]] = variant) -> list[Hit]:
            return variant[q.id][:TOP_K]

        rows.append(evaluate(sub, label, cached))
    for label, lever in [] if QUICK or NEW_ONLY or ASK_ONLY else LEVERS:

        def rank(q: Question, lever: Lever = lever) -> list[Hit]:
            return lever(searcher, q, pools[q.id], base[q.id])[:TOP_K]

        rows.append(evaluate(sub, label, rank))
    for row in rows:
        row["loss"] = 0
    return rows


def main() -> None:
    ap = rc.parser(__doc__)
    ap.add_argument("--test", action="store_true", help="the held-out sets instead of the development sets")
    ap.add_argument("--sets", default="", help="comma-separated set names (default: all)")
    ap.add_argument("--quick", action="store_true", help="only BM25, dense, before, now and follow rows")
    ap.add_argument("--new", action="store_true", help="skip section 29's levers (issue 23's second round)")
    ap.add_argument("--ask", action="store_true", help="only the asking clause's weights (section 44)")
    args = ap.parse_args()
    global QUICK, NEW_ONLY, ASK_ONLY
    QUICK, NEW_ONLY, ASK_ONLY = args.quick, args.new, args.ask
    s = rc.settings(args.models)
    sets = question_sets(args.test)
    if not args.test:  # the hard set is development only: it has no held-out half yet
        hard = load_questions(rc.QUESTIONS_DIR / "obsidian-help.hard.dev.jsonl")
        sets.insert(3, QuestionSet("obsidian-hard-dev", rc.OBSIDIAN, hard, "lines"))
        linked = load_questions(rc.QUESTIONS_DIR / "obsidian-help.wikilink2.dev.jsonl")
        sets.insert(4, QuestionSet("obsidian-wikilink2-dev", rc.OBSIDIAN, linked, "lines"))
    if args.sets:
        sets = [qs for qs in sets if qs.name in args.sets.split(",")]
    machine = rc.machine()
    print(rc.machine_line(machine))
    used, why = rc.load_variant(s, rc.DEFAULT_VARIANT)
    if used is None:
        raise SystemExit(why)
    out: dict[str, Any] = {}
    for qs in sets:
        with rc.corpus_index(s, qs.corpus, used, args.keep, rc.DEFAULT_VARIANT) as (engine, _report):
            rows = run_set(engine.require_searcher(), qs)
        out[qs.name] = rows
        print_set(qs.name, rows, show=0)
    print(f"written {rc.write_json(args.json, 'retrieval_levers', {'machine': machine, 'results': out})}")


if __name__ == "__main__":
    main()
