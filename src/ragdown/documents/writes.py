"""Pure text changes behind `ragdown_write`: appending, and recording who wrote a document (A11)."""

from __future__ import annotations

import json
import re

from ragdown.documents.blocks import scan_blocks
from ragdown.documents.errors import DocumentError
from ragdown.documents.frontmatter import frontmatter_end, scalar_text, split_frontmatter
from ragdown.documents.headings import heading_range_in
from ragdown.documents.text import BOM, has_crlf, is_blank, to_crlf

WRITE_TOOL = "ragdown_write"

_CRLF_OR_LF = re.compile(r"\r?\n")
_CREATED_BY_KEY = re.compile(r"^created_by\s*:")
_PLAIN_VALUE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:/@+-]*$")
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def yaml_string(value: str) -> str:
    """A double-quoted YAML scalar for any text: JSON's escapes, plus those YAML needs beyond them."""
    encoded = json.dumps(value, ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", encoded)


def yaml_value(value: str) -> str:
    """A word-like value as it is (`ragdown_write`), anything else double-quoted."""
    return value if _PLAIN_VALUE.match(value) else yaml_string(value)


def append_text(text: str, addition: str, heading: str | None = None) -> str:
    """`text` with `addition` at the end of the document, or at the end of the section under
    `heading` (nested subsections included), laid out as A11 says: the section's trailing blank
    lines collapsed, one blank line, the addition right-trimmed, one blank line, then the rest.

    Raises `DocumentError` (`not_found`) `no heading "…"` when the heading is not there, (`invalid`) for
    empty text.
    """
    added = addition.replace("\r\n", "\n").replace("\r", "\n").rstrip()
    if not added:
        raise DocumentError("invalid", "nothing to append: text is empty")
    bom = BOM if text.startswith(BOM) else ""
    crlf = has_crlf(text)
    lines = text[len(bom) :].replace("\r\n", "\n").replace("\r", "\n").split("\n")
    end = len(lines)
    if heading is not None:
        section = heading_range_in(lines, scan_blocks(lines, frontmatter_end(lines)), heading)
        if section is None:
            raise DocumentError("not_found", f'no heading "{heading}"')
        end = section[1]
    before = lines[:end]
    while before and is_blank(before[-1]):
        before.pop()
    rest = lines[end:]
    out = [*before, ""] if before else []
    out.extend(added.split("\n"))
    out.extend(["", *rest] if rest else [""])
    result = "\n".join(out)
    return bom + (to_crlf(result) if crlf else result)


def provenance(text: str) -> tuple[str | None, str | None]:
    """`created_by` and `session` as the document's frontmatter gives them."""
    data = split_frontmatter(text).data
    return scalar_text(data.get("created_by")), scalar_text(data.get("session"))


def stamp_provenance(text: str, created_by: str, session: str | None = None) -> str:
    """`text` with `created_by` (and `session`) in its frontmatter: appended to an existing block, or
    a new block put first. A text whose frontmatter already has `created_by` is returned as it is."""
    stamp = [f"created_by: {yaml_value(created_by)}"]
    if session:
        stamp.append(f"session: {yaml_string(session)}")
    bom = BOM if text.startswith(BOM) else ""
    body = text[len(bom) :]
    newline = "\r\n" if has_crlf(body) else "\n"
    lines = _CRLF_OR_LF.split(body)
    end = frontmatter_end(lines)
    if end == 0:
        return bom + newline.join(["---", *stamp, "---", body])
    if any(_CREATED_BY_KEY.match(line) for line in lines[1 : end - 1]):
        return text
    return bom + newline.join([*lines[: end - 1], *stamp, *lines[end - 1 :]])


def prepare_write(
    text: str,
    *,
    old_text: str | None,
    session_id: str | None = None,
    created_by: str = WRITE_TOOL,
) -> str:
    """The text `ragdown_write` puts on disk in place of `old_text` (None for a new document).

    A new document is stamped with `created_by` and the session. Replacing an agent-written document
    keeps its old `created_by` and `session`; a user-written one never gains them. When the old file
    had CRLF endings, the new text gets them too.
    """
    if old_text is None:
        return stamp_provenance(text, created_by, session_id)
    old_created_by, old_session = provenance(old_text)
    result = stamp_provenance(text, old_created_by, old_session) if old_created_by else text
    return to_crlf(result) if has_crlf(old_text) else result
