"""The path policy, in one place: which names are documents, which directories are never walked, which
paths a caller may name, and how big a document may be. Pure: no I/O.

The walk, the watcher, the sandbox, scopes, folder names, settings (`RAGDOWN_NOTES_DIR`) and link
resolution all ask these functions, so what the indexer reads and what a caller may write agree.
"""

from __future__ import annotations

import re

from ragdown.core.errors import Refusal, bad_request

MARKDOWN_EXTENSIONS = (".md", ".markdown", ".mdx")
# Plain-text files kept beside the Markdown (ReadmeDB stores `todo.txt`, `notes.json`): indexed, versioned,
# read and found as text (one body, no Markdown parse), written through the readmedb face, the REST file
# routes and the web UI. UTF-8 text only (a file that is not is skipped), the same size limit.
TEXT_EXTENSIONS = (".txt", ".json", ".jsonl", ".yaml", ".yml", ".toml", ".csv", ".tsv")
DOCUMENT_EXTENSIONS = MARKDOWN_EXTENSIONS + TEXT_EXTENSIONS
# A document larger than this is skipped by the indexer with a logged reason, and refused by every write:
# Markdown notes are far smaller, and a file this size is almost always a dump whose thousands of sections
# would drown search.
MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
NAME_MAX = 255  # bytes in one file or folder name (ext4, APFS, NTFS, …)
PATH_MAX = 4096  # bytes in a whole path, the docs dir's included
FOLDER_NAME_MAX = 100  # characters in a folder name made through ragdown
SHOWN_MAX = 100  # characters of a path quoted back in a refusal

_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_DRIVE = re.compile(r"^[A-Za-z]:")
# Characters no name may hold, since they forge what a listing of names shows: the control characters
# (C0, DEL and C1: a line break starts a forged line, ESC a terminal sequence), the line and paragraph
# separators (U+2028, U+2029) and the bidirectional controls (ALM U+061C, LRM/RLM U+200E-200F, the embeddings
# and overrides U+202A-202E, the isolates U+2066-2069), which show a name as another.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def is_markdown(name: str) -> bool:
    """`.md`, `.markdown` or `.mdx`, matched case-insensitively (a name or a whole path)."""
    return name.lower().endswith(MARKDOWN_EXTENSIONS)


def is_plain_text(name: str) -> bool:
    """A plain-text document's name (`TEXT_EXTENSIONS`, case-insensitively): kept and shown as text."""
    return name.lower().endswith(TEXT_EXTENSIONS)


def is_document(name: str) -> bool:
    """A name the index reads: Markdown or plain text (`DOCUMENT_EXTENSIONS`)."""
    return name.lower().endswith(DOCUMENT_EXTENSIONS)


def is_hidden(name: str) -> bool:
    """Dot-names (`.obsidian`, `.trash`, `.git`, `.env`) and `node_modules`: never walked, never documents."""
    return name.startswith(".") or name == "node_modules"


def is_text(name: str) -> bool:
    """A name that is Unicode text. The OS hands over names that are not UTF-8 with lone surrogates in them
    (`bad\\udcff.md`), which no database, JSON encoder or file watcher takes: such files are skipped."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unsafe_character(name: str) -> str | None:
    """The first character in `name` that no name may hold (`_UNSAFE`), as `U+000A`; None when there is none."""
    found = _UNSAFE.search(name)
    return f"U+{ord(found[0]):04X}" if found else None


def name_problem(name: str) -> str | None:
    """Why a file's or folder's name on disk is one ragdown cannot carry (the walk skips it, with this
    reason): not UTF-8 text, or a character no name may hold. None when it is usable."""
    if not is_text(name):
        return "its name is not valid UTF-8 text: rename it to index it"
    found = unsafe_character(name)
    if found:
        return f"its name holds the control character {found}: rename it to index it"
    return None


def is_usable(name: str) -> bool:
    """A name on disk the walk takes: Unicode text without a character no name may hold."""
    return name_problem(name) is None


def printable_name(name: str) -> str:
    """A name on disk as one line of text: bytes that are not UTF-8 as `\\udcff`, characters no name may hold
    escaped (`\\n`, `\\x1b`, `\\u2028`)."""
    text = name.encode("utf-8", "backslashreplace").decode("utf-8")
    return _UNSAFE.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text)


def shown(raw: str) -> str:
    """A caller's path quoted back in a message: shortened, and printable whatever it holds."""
    text = raw if len(raw) <= SHOWN_MAX else raw[:SHOWN_MAX] + "…"
    return repr(text.encode("utf-8", "backslashreplace").decode("utf-8"))


def outside(raw: str) -> Refusal:
    return bad_request(f"{shown(raw)} is outside the docs folder")


def _segments(raw: str, what: str) -> list[str]:
    """The non-empty segments of a relative path, checked for everything but its length and dot-names."""
    if "\x00" in raw:
        raise bad_request(f"{what} must not contain a NUL character")
    if not is_text(raw):
        raise bad_request(f"{shown(raw)} is not valid Unicode text")
    found = unsafe_character(raw)
    if found:
        raise bad_request(
            f"{shown(raw)}: names must not hold control characters (here {found}): no line breaks, tabs, "
            "escapes, line separators or bidirectional controls"
        )
    if "\\" in raw:
        raise bad_request(f"{shown(raw)}: use / in paths, not backslashes")
    if raw.startswith("/") or _DRIVE.match(raw):
        raise outside(raw)
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise outside(raw)
    return parts


def split_safe(raw: str) -> list[str]:
    """The segments of a relative path a caller names, or a refusal saying why it cannot be used.

    Refused: empty, absolute or drive paths, backslashes, NUL and the other control characters (`_UNSAFE`),
    text that is not Unicode, URL-encoded escapes,
    `..`, dot segments (`.obsidian`, `.git`), `node_modules`, and names or paths longer than a filesystem
    takes.
    """
    if not isinstance(raw, str) or raw.strip() == "":
        raise bad_request("a path is required")
    parts = _segments(raw, "a path")
    if len(raw.encode("utf-8")) >= PATH_MAX:
        raise bad_request(f"{shown(raw)}: the path is longer than {PATH_MAX} bytes")
    if _ESCAPE.search(raw):
        raise bad_request(f"{shown(raw)}: URL-encoded characters are not accepted in paths")
    if not parts:
        raise bad_request("a path is required")
    for part in parts:
        if is_hidden(part):
            raise bad_request(f"{shown(raw)}: dot-folders, dot-files and node_modules are not documents")
        if len(part.encode("utf-8")) > NAME_MAX:
            raise bad_request(f"{shown(raw)}: a name in it is longer than {NAME_MAX} bytes")
    return parts


def normalise_prefix(raw: str) -> str:
    """A `path_prefix` filter: `./ops/`, `ops/` and `ops` are the same directory, `` is everything; a prefix
    that climbs out (`..`, absolute) is refused."""
    if not raw:
        return ""
    try:
        parts = _segments(raw.strip().replace("\\", "/"), "path_prefix")
    except Refusal as err:
        if "outside the docs folder" not in err.message:
            raise  # NUL, a control character, text that is not Unicode: said as such
        raise bad_request(f"path_prefix {shown(raw)} is outside the docs folder") from None
    return "/".join(parts)


def notes_dir(value: str) -> str:
    """`RAGDOWN_NOTES_DIR`: relative, no `..`, no dot-folder, no `node_modules`, no NUL; `.` is the root.

    Raises `ValueError` with the reason (the settings turn it into a `ConfigError`)."""
    raw = value.strip().replace("\\", "/")
    try:
        parts = _segments(raw, "RAGDOWN_NOTES_DIR")
    except Refusal as err:
        if "outside" in err.message:
            raise ValueError(
                f"RAGDOWN_NOTES_DIR must be a relative path inside the folder, not {value!r}"
            ) from None
        raise ValueError(f"RAGDOWN_NOTES_DIR: {err.message}") from None
    if any(is_hidden(p) for p in parts):
        raise ValueError(f"RAGDOWN_NOTES_DIR must not name a dot-folder or node_modules: {value!r}")
    return "/".join(parts) or "."


def folder_name(raw: object) -> str:
    """A folder name ragdown may create or rename to: one segment of Unicode text, not starting with `.` or
    `-`, no control characters, not `node_modules`, at most 100 characters."""
    if not isinstance(raw, str) or not raw.strip():
        raise bad_request("a folder name is required")
    name = raw.strip()
    if not is_text(name):
        raise bad_request(f"{shown(name)} is not a usable folder name: it is not valid Unicode text")
    if (
        is_hidden(name)
        or name.startswith("-")
        or "/" in name
        or "\\" in name
        or _UNSAFE.search(name)
        or len(name) > FOLDER_NAME_MAX
    ):
        raise bad_request(
            f"{shown(name)} is not a usable folder name: one name without / or \\ or control characters, not "
            f"starting with . or -, not node_modules, at most {FOLDER_NAME_MAX} characters"
        )
    return name


def is_folder_name(name: str) -> bool:
    """A directory at the top of the docs dir that is a folder: not hidden, and a name ragdown can carry."""
    return not is_hidden(name) and is_usable(name)


def without_server_paths(text: str, docs_dir: str, data_dir: str, home: str = "") -> str:
    """`text` (an error's words, a setting) as a key holder may read it: the server's docs dir becomes the
    folder-named path under it (`/srv/docs/work/a.md` → `work/a.md`, the docs dir itself `.`), the data dir
    `<data dir>`, the home directory `~`. A key learns what its folders hold, never where the server keeps
    them."""
    for where, shown_as in ((data_dir, "<data dir>"), (docs_dir, "."), (home, "~")):
        where = where.rstrip("/")
        if not where:
            continue
        below = "" if shown_as == "." else shown_as + "/"
        pattern = re.compile(re.escape(where) + r"(?:(/)|(?=[\s'\"`:;,)\]]|$))")

        def shown_for(m: re.Match[str], below: str = below, whole: str = shown_as) -> str:
            return below if m.group(1) else whole

        text = pattern.sub(shown_for, text)
    return text
