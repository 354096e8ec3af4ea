"""Gold given as a title path (`gold_title_path`), resolved to line ranges with ragdown's own outline.

A title path names a section by the titles from its document down: `["Kestrel Scheduler", "Deployment",
"Staging"]` or the string `"Kestrel Scheduler > Deployment > Staging"` (`›` works too). It is matched
against the unmerged outline of headings as written (`documents.tree.raw_tree` over the same markdown-it
block scan as the chunks, so a `#` in code is no heading), in either of two forms:

- the breadcrumb form, exactly as a chunk's breadcrumb reads: the document title (frontmatter `title`,
  else the first H1, else the file name), then the heading chain, the title not repeated when the chain
  starts with it (`gold_heading` of the benchmark questions is this form);
- the headings alone, from the top heading down.

Titles compare with whitespace collapsed, case-folded, and without `` ` `` and `*` (inline code and
emphasis). A path of the document title alone that no heading matches names the whole document.

The range a section resolves to is its text: from the first non-blank line after its heading to the last
non-blank line before the next heading of the same or a higher level (subsections included); a section
with no text is its heading line(s). On `ragdown-runbooks` this gives exactly the `gold_lines` of every
question's `gold_heading` (tests/evaluation/test_evidence.py). When the question also gives `gold_lines`, those
stay the range, and the title path only names the document (and `gold_heading`) when they are absent.

Without `gold_path`, every Markdown file of the corpus (the files an index would read) is searched: one
document must match. Several sections of one document matching the same path all count as gold. A title
path that resolves to nothing, or to several documents, is an error naming the question.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ragdown.documents.blocks import scan_blocks
from ragdown.documents.frontmatter import frontmatter_of_lines
from ragdown.documents.meta import meta_from_parts
from ragdown.documents.parse import decode_text
from ragdown.documents.text import is_blank, normalize_text, split_lines
from ragdown.documents.tree import Node, raw_tree
from ragdown.evaluation.metrics import norm_path
from ragdown.evaluation.questions import Gold, Question
from ragdown.vault.walk import walk_markdown


class GoldError(ValueError):
    """A gold that cannot be resolved against the corpus; the message names the question."""


def title_key(title: str) -> str:
    """A title as title paths compare it."""
    text = unicodedata.normalize("NFC", title).replace("`", "").replace("*", "")
    return " ".join(text.split()).casefold()


def _key(titles: Sequence[str]) -> tuple[str, ...]:
    return tuple(title_key(t) for t in titles)


@dataclass(frozen=True)
class Section:
    """One heading's section: its breadcrumb's parts, its heading chain, and the lines of its text."""

    breadcrumb: tuple[str, ...]
    headings: tuple[str, ...]
    lines: tuple[int, int]

    @property
    def heading(self) -> str:
        return " > ".join(self.breadcrumb)


@dataclass(frozen=True)
class Outline:
    """A document's sections as written (unmerged), and the lines of its whole text."""

    path: str
    title: str
    body: tuple[int, int] | None
    sections: tuple[Section, ...]

    def find(self, title_path: Sequence[str]) -> list[Section]:
        """The sections the title path names, in document order; the whole document when the path is its
        title alone and no section matches."""
        want = _key(title_path)
        found = [s for s in self.sections if want in (_key(s.breadcrumb), _key(s.headings))]
        if not found and self.body is not None and want == _key([self.title]):
            found = [Section((self.title,), (), self.body)]
        return found


def _text_lines(lines: Sequence[str], first: int, last: int) -> tuple[int, int] | None:
    """`first`..`last` (1-based) without the blank lines at either end; None when all are blank."""
    while first <= last and is_blank(lines[first - 1]):
        first += 1
    while last >= first and is_blank(lines[last - 1]):
        last -= 1
    return (first, last) if first <= last else None


def outline_of(text: str, path: str) -> Outline:
    """The outline of one document's text (`path` is its corpus-relative POSIX path)."""
    lines = split_lines(normalize_text(text))
    if len(lines) > 1 and lines[-1] == "":
        lines = lines[:-1]  # a final line break does not start another line
    front = frontmatter_of_lines(lines)
    body_start = front.body_start_line - 1
    scan = scan_blocks(lines, body_start)
    title = meta_from_parts(front.data, lines, body_start, scan, path).title
    tree = raw_tree(lines, body_start, scan, title)
    heading_at = {h.start + 1: h for h in scan.headings}
    sections: list[Section] = []

    def walk(node: Node, chain: tuple[str, ...]) -> None:
        for child in node.children:
            if child.kind != "section":
                continue
            heading = heading_at[child.start_line]
            below = (*chain, heading.text) if heading.text else chain
            text = _text_lines(lines, heading.end + 1, child.end_line)
            crumb = below if below[:1] == (title,) else (title, *below)
            sections.append(Section(crumb, below, text or (child.start_line, heading.end)))
            walk(child, below)

    walk(tree, ())
    body = _text_lines(lines, body_start + 1, len(lines)) if lines else None
    return Outline(path, title, body, tuple(sections))


class Corpus:
    """The Markdown files of a folder as an index would read them, outlined on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._paths: dict[str, str] | None = None  # normalised path -> path as walked
        self._outlines: dict[str, Outline | None] = {}

    def _all(self) -> dict[str, str]:
        if self._paths is None:
            walked = walk_markdown(self.root, folders=False).files
            self._paths = {norm_path(f.path): f.path for f in walked}
        return self._paths

    def outline(self, path: str) -> Outline | None:
        """The outline of the document at `path` (as a question writes it); None when there is none."""
        rel = self._all().get(norm_path(path))
        if rel is None:
            return None
        if rel not in self._outlines:
            try:
                raw = (self.root / rel).read_bytes()
            except OSError:
                self._outlines[rel] = None
            else:
                self._outlines[rel] = outline_of(decode_text(raw)[0], rel)
        return self._outlines[rel]

    def outlines(self) -> Iterator[Outline]:
        for rel in self._all().values():
            outline = self.outline(rel)
            if outline is not None:
                yield outline


def _near(outline: Outline, title_path: Sequence[str]) -> str:
    crumbs = [s.heading for s in outline.sections] or [outline.title]
    close = difflib.get_close_matches(" > ".join(title_path), crumbs, n=3, cutoff=0.4)
    return f" (closest: {'; '.join(close)})" if close else ""


def resolve_gold(qid: str, gold: Gold, corpus: Corpus) -> list[Gold]:
    """The golds a title-path gold stands for, with their path, lines and heading."""
    shown = " > ".join(gold.title_path)
    if gold.path:
        outline = corpus.outline(gold.path)
        if outline is None:
            raise GoldError(f"question {qid}: gold_path {gold.path!r} is no Markdown file of {corpus.root}")
        found = outline.find(gold.title_path)
        if not found:
            raise GoldError(
                f"question {qid}: title path {shown!r} names no section of {gold.path}"
                + _near(outline, gold.title_path)
            )
    else:
        matches = [(o, f) for o in corpus.outlines() if (f := o.find(gold.title_path))]
        if not matches:
            raise GoldError(
                f"question {qid}: title path {shown!r} names no section of any file in {corpus.root}"
            )
        if len(matches) > 1:
            paths = ", ".join(o.path for o, _ in matches[:5]) + (" ..." if len(matches) > 5 else "")
            raise GoldError(
                f"question {qid}: title path {shown!r} names sections in {len(matches)} files ({paths}): "
                "give gold_path"
            )
        outline, found = matches[0]
    path = gold.path or outline.path
    if gold.lines is not None:
        return [replace(gold, path=path, heading=gold.heading or found[0].heading)]
    return [replace(gold, path=path, lines=s.lines, heading=gold.heading or s.heading) for s in found]


def _in_corpus(root: Path, path: str) -> bool:
    """Whether a gold path names a file of the corpus (as written, or without its Markdown extension)."""
    rel = norm_path(path)
    return any((root / candidate).is_file() for candidate in (rel, f"{rel}.md", f"{rel}.markdown"))


def resolve_questions(questions: Sequence[Question], root: Path) -> list[Question]:
    """The questions with every title-path gold resolved against the folder `root` (see the module
    docstring); raises `GoldError` for one that cannot be."""
    corpus = Corpus(root)
    out: list[Question] = []
    for q in questions:
        named = [g.path for g in q.golds if g.path and not g.title_path]  # title paths: resolved below
        if named and len(named) == len(q.golds) and not any(_in_corpus(root, p) for p in named):
            raise GoldError(f"question {q.id}: its gold path {named[0]} is no file of {root}")
        if not any(g.title_path for g in q.golds):
            out.append(q)
            continue
        golds: list[Gold] = []
        for gold in q.golds:
            golds.extend(resolve_gold(q.id, gold, corpus) if gold.title_path else [gold])
        out.append(replace(q, golds=tuple(golds)))
    return out
