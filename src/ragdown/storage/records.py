"""What every index store reads and writes, whichever database holds it: the records of files and chunks,
the index's identity (`IndexMeta`, whose mismatch rebuilds) and the store's own error."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from ragdown.documents.linkkey import link_key
from ragdown.documents.model import Document, Link
from ragdown.embedders.base import Vectors

INDEX_VERSION = 6  # 2: section trees (`trees`) and each chunk's `node_id`; 3: the trigram table `chunks_tri`;
# 4: a chunk longer than the embedder's window keeps one vector per window in its `vecs` blob; 5: frontmatter
# properties (`props`, for `ragdown_query`: `storage/properties.py`) and the link table `links` (each file's
# links as written, by name key); 6: covering `props` indexes (kind in props_num/props_text, props_sort for
# sorts and `contains`)

META_KEYS = frozenset(
    {"embedder", "dim", "chunker_version", "index_version", "setext"}
)  # IndexMeta's, stored


def tags_column(tags: Iterable[str]) -> str:
    """The `tags` column: each tag between spaces, so a whole tag is found with LIKE '% tag %'."""
    joined = " ".join(tags)
    return f" {joined} " if joined else " "


class StoreError(RuntimeError):
    """The index cannot be used as it is (wrong version, or a reader facing a rebuild)."""


@dataclass(frozen=True)
class IndexMeta:
    embedder: str
    dim: int
    chunker_version: int
    index_version: int = INDEX_VERSION
    setext: bool = True  # RAGDOWN_SETEXT: recorded only when off, so an index built before it still matches

    def as_dict(self) -> dict[str, str]:
        out = {
            "embedder": self.embedder,
            "dim": str(self.dim),
            "chunker_version": str(self.chunker_version),
            "index_version": str(self.index_version),
        }
        if not self.setext:
            out["setext"] = "false"
        return out


def rebuild_message(where: str, have: Mapping[str, str], want: IndexMeta) -> str:
    """Why a reader cannot use the index `where` (its meta `have`, this process's `want`): what differs,
    and what rebuilds it. Only the primary rebuilds, and a reader sees one running: it is the other process
    (another version of ragdown, or another embedder) that must change, or stop so that one of this kind
    takes over and rebuilds the index."""
    if not have:
        return (
            f"the index at {where} has not been built yet: the primary (the ragdown process indexing it) "
            "builds it; restart that process if it does not"
        )
    ours = want.as_dict()
    differs = [
        key for key in ("embedder", "dim", "chunker_version", "index_version") if have.get(key) != ours[key]
    ]
    parts: list[str] = []
    if "embedder" in differs or "dim" in differs:
        theirs = f"{have.get('embedder', 'none')} ({have.get('dim', '?')} dimensions)"
        parts.append(f"the embedder {theirs}, not this process's {want.embedder} ({want.dim} dimensions)")
    for key, what in (("chunker_version", "chunker version"), ("index_version", "index version")):
        if key in differs:
            parts.append(f"{what} {have.get(key, 'none')}, not this version's {ours[key]}")
    setext = have.get("setext", "true") != ours.get("setext", "true")
    if setext:
        parts.append(
            f"RAGDOWN_SETEXT={have.get('setext', 'true')}, not this process's {ours.get('setext', 'true')}"
        )
    versions = "chunker_version" in differs or "index_version" in differs
    embedders = "embedder" in differs or "dim" in differs
    if setext and not versions and not embedders:
        fix = "give every ragdown process on this folder the same RAGDOWN_SETEXT, or restart the primary with it"
    elif versions and embedders:
        fix = (
            f"restart it with this version of ragdown and RAGDOWN_EMBEDDER={want.embedder} and it rebuilds "
            "the index"
        )
    elif versions:
        fix = (
            "it is another version of ragdown, still running: restart it with this version and it rebuilds "
            "the index, or stop it and the next ragdown of this version to take the index over (a reader "
            "running now, or `ragdown index --full`) rebuilds it"
        )
    else:
        fix = (
            "give every ragdown process on this folder the same RAGDOWN_EMBEDDER, or restart the primary "
            f"with {want.embedder} and it rebuilds the index"
        )
    return (
        f"the index at {where} was built with {' and '.join(parts)}: only the primary (the ragdown process "
        f"indexing it, running now) rebuilds it; {fix}"
    )


class FileState(NamedTuple):
    """What the index remembers of a file, enough to decide whether it must be read again.

    A tuple, not a dataclass: cheaper to build, and every sync that reads the hashes builds one per file."""

    size: int
    stat_mtime_ns: int
    hash: str


@dataclass(frozen=True)
class FileRecord:
    id: int
    path: str
    folder: str
    size: int
    mtime_ns: int
    hash: str
    title: str
    description: str | None
    created_by: str | None
    session: str | None
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    supersedes: tuple[str, ...]
    chunk_count: int


@dataclass(frozen=True)
class ChunkRecord:
    id: int
    path: str
    folder: str
    idx: int
    start_line: int
    end_line: int
    heading: str
    breadcrumb: str
    text: str
    file: FileRecord
    node_id: str = ""

    @property
    def key(self) -> str:
        """`<path>#<index>@<first 12 hex of the file hash>`: stable while the file is unchanged."""
        return f"{self.path}#{self.idx}@{self.file.hash[:12]}"


@dataclass(frozen=True)
class LinkRow:
    """One stored link: the document it is in (docs-relative `source`), its line and that line's text, and the
    link as `find_links` found it (`kind`, `raw`, `target`, `anchor`), enough to resolve it again."""

    source: str
    line: int
    text: str
    kind: str
    raw: str
    target: str
    anchor: str | None

    def as_link(self) -> Link:
        kind: Literal["wiki", "markdown"] = "markdown" if self.kind == "markdown" else "wiki"
        return Link(kind, False, self.raw, self.target, self.anchor, self.line, 0, 0)


# The stored columns of a link, in this order, in both stores (`link_rows` makes them, `LinkRow` reads them).
LINK_COLUMNS = "line, text, kind, raw, target, anchor"
LINE_TEXT_LIMIT = 1000  # characters of a linking line kept


def link_rows(document: Document) -> list[tuple[str, int, str, str, str, str, str | None]]:
    """(key, line, text, kind, raw, target, anchor) of each link of `document`."""
    texts = document.link_lines or ("",) * len(document.links)
    return [
        (link_key(link), link.line, text[:LINE_TEXT_LIMIT], link.kind, link.raw, link.target, link.anchor)
        for link, text in zip(document.links, texts, strict=True)
    ]


def unit_mean(rows: Vectors) -> Vectors | None:
    """The mean of `rows` (vectors of one width) scaled to unit length, None for a zero mean: a section's
    or a document's vectors as one query vector, in both stores."""
    mean = np.asarray(rows, dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return np.asarray(mean / norm, dtype=np.float32) if norm > 0 else None


@dataclass(frozen=True)
class PendingFile:
    """A parsed file ready to be written with its vectors (None when indexing without an embedder)."""

    path: str
    folder: str
    size: int
    stat_mtime_ns: int
    mtime_ns: int
    hash: str
    document: Document
    vectors: Vectors | None
    # Chunk index -> the vectors of its further windows, for chunks longer than the embedder reads at once
    # (`embedders.base.WindowedEmbedder`); `vectors` holds each chunk's first window. A backend that keeps
    # one vector per chunk may ignore them.
    windows: Mapping[int, Vectors] | None = None


# The columns a `FileRecord` is read from, in this order, in both stores (`f.` prefixed: `FILE_COLUMNS_F`),
# and a chunk's own columns before them (`CHUNK_COLUMNS`), as `chunk_record` reads a joined row.
FILE_COLUMNS = (
    "id, path, folder, size, mtime_ns, hash, title, description, created_by, session, tags, aliases,"
    " supersedes, chunk_count"
)
FILE_COLUMNS_F = ", ".join(f"f.{c.strip()}" for c in FILE_COLUMNS.split(","))
CHUNK_COLUMNS = "c.id, c.idx, c.start_line, c.end_line, c.heading, c.breadcrumb, c.text, c.node_id"


def file_record(row: Sequence[Any]) -> FileRecord:
    """A `FileRecord` from a row of `FILE_COLUMNS`."""
    return FileRecord(
        id=int(row[0]),
        path=str(row[1]),
        folder=str(row[2]),
        size=int(row[3]),
        mtime_ns=int(row[4]),
        hash=str(row[5]),
        title=str(row[6]),
        description=row[7],
        created_by=row[8] or None,
        session=row[9] or None,
        tags=tuple(str(row[10]).split()),
        aliases=tuple(json.loads(row[11])),
        supersedes=tuple(json.loads(row[12])),
        chunk_count=int(row[13]),
    )


def chunk_record(row: Sequence[Any]) -> ChunkRecord:
    """A `ChunkRecord` from a row of `CHUNK_COLUMNS` followed by `FILE_COLUMNS_F`."""
    file = file_record(row[8:])
    return ChunkRecord(
        id=int(row[0]),
        path=file.path,
        folder=file.folder,
        idx=int(row[1]),
        start_line=int(row[2]),
        end_line=int(row[3]),
        heading=str(row[4]),
        breadcrumb=str(row[5]),
        text=str(row[6]),
        file=file,
        node_id=str(row[7]),
    )
