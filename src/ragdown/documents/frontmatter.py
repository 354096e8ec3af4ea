"""YAML frontmatter: where it ends, and its data, read defensively.

Frontmatter exists only when the first line is `---`; it closes at the next `---` or `...` line, and
with no closing line there is none. Its YAML is data from a file, so it is size-capped, its expanded
structure is bounded (an alias bomb, or nesting deeper than anyone writes properties, is refused), and
any failure leaves the document without
frontmatter data plus a warning instead of an exception.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ragdown.documents.text import normalize_text, split_lines

if TYPE_CHECKING:  # imported on the first frontmatter read: a search of an unchanged folder reads none
    import yaml

MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_FRONTMATTER_NODES = 100_000
MAX_FRONTMATTER_DEPTH = 64


def _timestamp_as_text(loader: yaml.SafeLoader, node: yaml.Node) -> object:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


def _int_or_text(loader: yaml.SafeLoader, node: yaml.Node) -> object:
    try:
        value = loader.construct_yaml_int(node)  # type: ignore[arg-type]
        str(value)  # a hexadecimal or binary literal can still be too long to write in decimal
    except ValueError:
        return loader.construct_scalar(node)  # type: ignore[arg-type]
    return value


def _untagged(loader: yaml.SafeLoader, node: yaml.Node) -> object:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


@functools.cache
def _loader() -> type[yaml.SafeLoader]:
    """The safe loader (libyaml's when there is one), made lenient: timestamps stay text, an integer too
    long for Python stays text, and an unknown tag is read as the plain value it tags, so one odd value
    cannot cost the document all of its frontmatter."""
    import yaml

    base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _Loader(base):  # type: ignore[valid-type,misc]
        pass

    _Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)
    _Loader.add_constructor("tag:yaml.org,2002:int", _int_or_text)
    _Loader.add_constructor(None, _untagged)
    return _Loader


class Frontmatter(NamedTuple):
    """Frontmatter data, the 1-based line the body starts on, and warnings for the caller to log."""

    data: dict[str, Any]
    body_start_line: int
    warnings: tuple[str, ...]


def split_frontmatter(text: str) -> Frontmatter:
    """Split the frontmatter off a document's text (any line endings, BOM allowed)."""
    return frontmatter_of_lines(split_lines(normalize_text(text)))


def frontmatter_end(lines: Sequence[str]) -> int:
    """How many lines the frontmatter takes, closing line included; 0 when there is none."""
    if not lines or lines[0].strip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return index + 1
    return 0


def frontmatter_of_lines(lines: Sequence[str]) -> Frontmatter:
    """`split_frontmatter` over a document already split into normalised lines."""
    end = frontmatter_end(lines)
    if end == 0:
        return Frontmatter({}, 1, ())
    data, warnings = load_yaml_mapping("\n".join(lines[1 : end - 1]))
    return Frontmatter(data, end + 1, warnings)


class YamlRead(NamedTuple):
    """A frontmatter's YAML as the index reads it: its mapping (string keys only), or `{}` and why not;
    `line` is the 0-based line of `source` where the YAML parser placed a syntax error (None otherwise)."""

    data: dict[str, Any]
    problem: str | None = None
    line: int | None = None
    syntax: str | None = None
    """The YAML parser's own words when the problem is the YAML's syntax (not a limit or the shape)."""


def load_yaml_mapping(source: str) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The YAML mapping in `source` with string keys only, or `{}` and a warning when it is unusable."""
    read = read_yaml_mapping(source)
    return read.data, ((f"frontmatter ignored: {read.problem}",) if read.problem else ())


def read_yaml_mapping(source: str) -> YamlRead:
    """`load_yaml_mapping` saying where: never raises for any text (MemoryError aside)."""
    if len(source) > MAX_FRONTMATTER_CHARS:
        return YamlRead({}, f"longer than {MAX_FRONTMATTER_CHARS} characters")
    if not source.strip():
        return YamlRead({})
    import yaml

    try:
        loaded = yaml.load(source, Loader=_loader())
    except MemoryError:
        raise
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        what = error.problem or _first_line(error)
        return YamlRead({}, f"invalid YAML ({what})", mark.line if mark is not None else None, what)
    except Exception as error:  # YAML, RecursionError, a value Python cannot hold: never the caller's crash
        what = _first_line(error)
        return YamlRead(
            {}, f"invalid YAML ({what})", syntax=what if isinstance(error, yaml.YAMLError) else None
        )
    if loaded is None:
        return YamlRead({})
    if not isinstance(loaded, dict):
        return YamlRead({}, f"a YAML {type(loaded).__name__}, not a mapping")
    too_big = _too_big(loaded, MAX_FRONTMATTER_NODES, MAX_FRONTMATTER_DEPTH)
    if too_big:
        return YamlRead({}, too_big)
    return YamlRead({key: value for key, value in loaded.items() if isinstance(key, str)})


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _too_big(root: object, limit: int, depth: int) -> str | None:
    """Why walking `root` as a tree (shared and recursive references counted every time) is too much: more
    than `limit` values, or containers nested more than `depth` deep. Values are counted as they are
    found, before they are walked, so a billion laughs (or a list holding itself) costs `limit` steps and
    memory at most."""
    stack: list[tuple[object, int]] = [(root, 0)]
    found = 1
    while stack:
        node, level = stack.pop()
        if not isinstance(node, dict | list | tuple | set):
            continue
        if level >= depth:
            return f"its YAML nests deeper than {depth} levels"
        found += 2 * len(node) if isinstance(node, dict) else len(node)
        if found > limit:
            return f"its YAML expands to more than {limit} values"
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        stack.extend((child, level + 1) for child in children)
    return None


def scalar_text(value: object) -> str | None:
    """A YAML scalar as one line of text; None for a missing, empty or non-scalar value.

    Block scalars (`>` and `|`) arrive with line breaks and are joined with single spaces. Dates,
    numbers and booleans are written the way YAML spells them.
    """
    if value is None or isinstance(value, dict | list | tuple | set):
        return None
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, datetime.date | datetime.datetime):
        text = value.isoformat()
    elif isinstance(value, bytes):
        return None
    elif isinstance(value, str | int | float):
        text = str(value)
    else:
        return None
    if "\n" in text or "\r" in text:
        text = " ".join(part.strip() for part in text.splitlines() if part.strip())
    text = text.strip()
    return text or None


def string_items(value: object) -> list[str]:
    """The scalar items of a YAML list as text (nested lists and mappings skipped); [] for a scalar."""
    if not isinstance(value, list | tuple):
        return []
    items: list[str] = []
    for item in value:
        text = scalar_text(item)
        if text is not None:
            items.append(text)
    return items
