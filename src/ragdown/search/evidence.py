"""Evidence from a section's page and from its links, lent to the fused scores (score fusion only).

- **The page's title**: when the query names a page's title (all its words), each of that page's sections in
  the fused top 10 lends `PAGE_LIFT` × its score to the page's introduction (read from the index when it is
  no candidate), unless the query also names one of those sections by its own heading: a question about the page's subject ("what does the graph view show") is matched by many
  of its subsections, and the page's overview answers it.
- **Links**: each of the first `LINK_SOURCES` hits lends `LINK_LIFT` × its score to the best section (by
  cosine) of every note it wikilinks to, scaled by that section's cosine over the query's best cosine: the
  answer behind a link in a matching passage.

Measured with minilm on five development sets (`bench/retrieval_levers.py`, `docs/benchmarks.md` section 29):
ahead or even on each; lending to every ancestor, heavier lifts and query-type routing lost on some.
Switches measured in section 33 and left off (each lost a question on some set): `LINK_ANCHOR` (a
`[[Page#Heading]]` link lends to that heading's section), `LINK_NOVELTY` / `LINK_BASE` (a link lends in
proportion to the query terms its section holds that the source lacks), `LINK_SKIP_NAMED` (a note the query
names by alias lends nothing); `bench/retrieval_levers.py --new` re-measures them.
"""

from __future__ import annotations

import re

from ragdown.documents import find_links
from ragdown.embedders.base import Vectors
from ragdown.search.linking import document_resolver
from ragdown.search.query import coverage, fts_terms
from ragdown.storage.backend import DenseIndex, IndexStore
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.records import ChunkRecord

PAGE_LIFT = 0.1
LINK_LIFT = 0.3
LINK_SOURCES = 3
LINK_ANCHOR = False  # True: a `[[Page#Heading]]` link lends to that heading's section (measured: off)
LINK_NOVELTY = 0.0  # scale a link's lift by what the linked section adds to the source
LINK_BASE = 1.0
LINK_SKIP_NAMED = False  # a note the query names by an alias lends nothing along its links
EVIDENCE_TOP = 10  # the fused candidates that lend

Fused = dict[int, tuple[float, set[str]]]


def names_title(query: str, title: str) -> bool:
    """Whether `query` says every word of `title` (a plural `s` either way counts)."""
    words = re.findall(r"\w+", title.lower())
    said = set(re.findall(r"\w+", query.lower()))
    return bool(words) and all(w in said or w.rstrip("s") in said or w + "s" in said for w in words)


def _top(fused: Fused) -> list[tuple[int, float]]:
    ranked = sorted(fused, key=lambda cid: -fused[cid][0])[:EVIDENCE_TOP]
    return [(cid, fused[cid][0]) for cid in ranked]


def _lend(fused: Fused, extra: dict[int, float], source: str) -> None:
    for cid, lift in extra.items():
        score, sources = fused.get(cid, (0.0, set()))
        fused[cid] = (score + lift, sources | {source})


def lend_page_evidence(store: IndexStore, query: str, fused: Fused) -> None:
    """Lift the introduction of each page whose title `query` names by its top sections' scores."""
    if PAGE_LIFT <= 0:
        return
    top = _top(fused)
    records = store.chunks_by_id([cid for cid, _ in top])
    intros: dict[int, int | None] = {}
    extra: dict[int, float] = {}
    # A page one of whose candidate sections the query names by its own heading is asked about that section.
    pointed = {
        rec.file.id
        for rec in records.values()
        if " › " in rec.breadcrumb and names_title(query, rec.breadcrumb.rsplit(" › ", 1)[1])
    }
    for cid, score in top:
        rec = records.get(cid)
        if rec is None or rec.file.id in pointed or not names_title(query, rec.breadcrumb.split(" › ")[0]):
            continue
        fid = rec.file.id
        if fid not in intros:
            ids = [c for c, _ in store.chunk_ids_of_files([fid])]
            roots = sorted(
                (r.idx, c) for c, r in store.chunks_by_id(ids).items() if " › " not in r.breadcrumb
            )
            intros[fid] = roots[0][1] if roots else None
        intro = intros[fid]
        if intro is not None and intro != cid:
            extra[intro] = extra.get(intro, 0.0) + PAGE_LIFT * score
    _lend(fused, extra, "page")


def lend_link_evidence(
    store: IndexStore,
    matrix: DenseIndex,
    qvec: Vectors,
    best_cosine: float,
    flt: FileFilter,
    fused: Fused,
    query: str = "",
    named: frozenset[str] = frozenset(),
) -> None:
    """Lift the section each of the first hits wikilinks to (within `flt`): the linked heading's section
    (`[[Page#Heading]]`, or its best subsection by cosine), else the note's best section by cosine."""
    if LINK_LIFT <= 0:
        return
    top = _top(fused)[:LINK_SOURCES]
    records = store.chunks_by_id([cid for cid, _ in top])
    allowed: set[int] | None = None
    extra: dict[int, float] = {}
    best = best_cosine if best_cosine > 0 else 1.0
    terms = fts_terms(query) if LINK_NOVELTY > 0 and query else []
    for cid, score in top:
        rec = records.get(cid)
        if rec is None or (LINK_SKIP_NAMED and rec.path in named):
            continue
        strip = len(rec.folder) + 1 if rec.folder else 0
        # built once per index generation: a fresh one per hit cost ~0.1 s of CPU at 10,000 notes, three a
        # query (docs/benchmarks.md section 34); the same resolver: documents only, no attachments
        resolver = document_resolver(store, rec.folder)
        said = _held(terms, rec) if terms else set()
        for link in find_links(rec.text):
            if link.kind != "wiki" or link.embed:
                continue
            resolved = resolver.resolve(link.target, rec.path[strip:])
            if resolved is None:
                continue
            full = (rec.folder + "/" if rec.folder else "") + resolved.path
            target = store.get_file(full) if full != rec.path else None
            if target is None:
                continue
            if allowed is None:
                allowed = set(store.file_ids(flt))
            if target.id not in allowed:
                continue
            ids = [c for c, _ in store.chunk_ids_of_files([target.id])]
            if LINK_ANCHOR and link.anchor:
                ids = _under_anchor(store, ids, link.anchor) or ids
            sims = matrix.cosine(qvec, ids)
            if not sims:
                continue
            linked, sim = max(sims.items(), key=lambda kv: kv[1])
            weight = LINK_LIFT * score * max(0.0, sim) / best
            if terms:
                weight *= LINK_BASE + LINK_NOVELTY * _novelty(terms, said, store, linked)
                if weight <= 0:  # the linked section adds nothing the source lacks
                    continue
            extra[linked] = max(extra.get(linked, 0.0), weight)
    _lend(fused, extra, "link")


def _held(terms: list[str], rec: ChunkRecord) -> set[str]:
    text = f"{rec.breadcrumb}\n{rec.text}"
    return {t for t in terms if coverage([t], text) > 0}


def _novelty(terms: list[str], said: set[str], store: IndexStore, cid: int) -> float:
    """The share of the query's terms the source lacks that the linked section holds (0 when it lacks none)."""
    missing = [t for t in terms if t not in said]
    if not missing:
        return 0.0
    rec = store.chunks_by_id([cid]).get(cid)
    if rec is None:
        return 0.0
    return len(_held(missing, rec)) / len(missing)


def _slug(heading: str) -> str:
    return " ".join(re.findall(r"\w+", heading.lower()))


def _under_anchor(store: IndexStore, ids: list[int], anchor: str) -> list[int]:
    """The chunks of the section `anchor` names (its heading, by words) and of its subsections."""
    want = _slug(anchor)
    recs = store.chunks_by_id(ids)
    heads = {cid: [_slug(h) for h in r.breadcrumb.split(" › ")] for cid, r in recs.items()}
    out = []
    for cid, path in heads.items():
        if want in path[1:] or (len(path) == 1 and want == path[0]):
            out.append(cid)
    return out
