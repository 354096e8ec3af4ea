"""Tool sets: ragdown's own tools, and thin faces with another system's tool names and shapes.

A folder's MCP server offers the `ragdown` set by default. `RAGDOWN_TOOLSET` (stdio, and the default of
`serve`'s folders), a folder's `toolset` setting and `?toolset=` on an MCP URL (the URL wins over the
folder, the folder over the variable) pick another set or a comma-separated union (`ragdown,markindex`).
A tool name two sets of a union share is refused, never silently overridden. Read-only mode and disabled
tools apply to every set by each tool's annotations. A call to a tool the endpoint does not offer (a typo, a
write tool under read-only) is answered as the selection's first set answers it: ragdown's (and MarkIndex's
and ReadmeDB's) as an `isError` result, hallouminate's as its JSON-RPC `-32602`, as its own server does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from ragdown.core.errors import Refusal, bad_request
from ragdown.tools.base import FailureStyle
from ragdown.tools.catalog import ALL_TOOLS, AnyTool
from ragdown.tools.root import FOLDERS
from ragdown.toolsets.base import PromptSpec, ResourceSpec, ResourceTemplateSpec

DEFAULT_TOOLSET = "ragdown"


def ragdown_instructions(title: str) -> str:
    return (
        f'Search the "{title}" folder of the user\'s Markdown documents. Call ragdown_recall before '
        "answering a question the documents might cover, then ragdown_read_doc to read around a hit; "
        "ragdown_outline walks folders and a long document's sections."
    )


def root_instructions() -> str:
    """The root endpoint's (`/mcp` under `RAGDOWN_ROOT_MCP`): every folder the caller sees, none by title."""
    return (
        "Search the user's Markdown documents, in every folder this server offers: ragdown_folders lists "
        "them. Call ragdown_recall before answering a question the documents might cover (it searches every "
        "folder unless given one, and each hit names its folder), then ragdown_read_doc with the hit's folder "
        "and path to read around it; ragdown_outline walks a folder and a long document's sections. A tool "
        "that works in one folder takes it as folder, and its paths are relative to that folder."
    )


@dataclass(frozen=True)
class ToolSet:
    name: str
    tools: tuple[AnyTool, ...]
    instructions: Callable[[str], str]
    resources: tuple[ResourceSpec, ...] = ()
    templates: tuple[ResourceTemplateSpec, ...] = ()
    prompts: tuple[PromptSpec, ...] = ()
    # How a call to a tool this set does not offer is answered (a tool's `failure` style); None: ragdown's
    # `isError` result.
    unknown: FailureStyle | None = None


def _ragdown() -> ToolSet:
    return ToolSet("ragdown", ALL_TOOLS, ragdown_instructions)


def _markindex() -> ToolSet:
    from ragdown.toolsets import markindex
    from ragdown.toolsets.markindex_retrieve import RETRIEVE

    # `retrieve` is listed only where a model is configured (`ToolSpec.needs_model`).
    return ToolSet("markindex", (*markindex.TOOLS, RETRIEVE), lambda _title: markindex.INSTRUCTIONS)


def _readmedb() -> ToolSet:
    from ragdown.toolsets import readmedb

    return ToolSet(
        "readmedb",
        readmedb.TOOLS,
        lambda _title: readmedb.INSTRUCTIONS,
        resources=readmedb.RESOURCES,
        templates=readmedb.TEMPLATES,
        prompts=readmedb.PROMPTS,
    )


def _hallouminate() -> ToolSet:
    from ragdown.toolsets import hallouminate

    return ToolSet(
        "hallouminate",
        hallouminate.TOOLS,
        lambda _title: hallouminate.INSTRUCTIONS,
        unknown=hallouminate.jsonrpc_failure,
    )


EXTRA_TOOLSET = "extra"


def extra_instructions(_title: str) -> str:
    return (
        "ragdown_changes tells what changed in the documents since a time or a version, and who changed it. "
        "ragdown_query answers questions about frontmatter properties, tags and links as a table. "
        "ragdown_related gives a note's links, backlinks, tag-mates and similar sections."
    )


def _extra() -> ToolSet:
    """ragdown's own tools beyond the default set, offered on request (`ragdown,extra`): each listed tool
    costs an agent context on every turn, and the default set already costs what the seed's twelve did."""
    from ragdown.tools.changes import CHANGES
    from ragdown.tools.query import QUERY
    from ragdown.tools.related import RELATED

    return ToolSet(EXTRA_TOOLSET, (CHANGES, QUERY, RELATED), extra_instructions)


def _chatgpt() -> ToolSet:
    from ragdown.toolsets import chatgpt

    return ToolSet("chatgpt", chatgpt.TOOLS, lambda _title: chatgpt.INSTRUCTIONS)


class _Sets(Mapping[str, ToolSet]):
    """The tool sets by name, each set's module imported the first time the set is asked for: a server
    offering only `ragdown` never builds the other sets' tools (tens of ms of pydantic models at start-up)."""

    def __init__(self, loaders: dict[str, Callable[[], ToolSet]]) -> None:
        self._loaders = loaders
        self._loaded: dict[str, ToolSet] = {}
        self._lock = threading.Lock()

    def __getitem__(self, name: str) -> ToolSet:
        found = self._loaded.get(name)
        if found is None:
            loader = self._loaders[name]  # KeyError for an unknown name, as a dict
            with self._lock:
                found = self._loaded.get(name)
                if found is None:
                    found = self._loaded[name] = loader()
        return found

    def __contains__(self, name: object) -> bool:  # without loading the set
        return name in self._loaders

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaders)

    def __len__(self) -> int:
        return len(self._loaders)


SETS: Mapping[str, ToolSet] = _Sets(
    {
        "ragdown": _ragdown,
        "markindex": _markindex,
        "readmedb": _readmedb,
        "hallouminate": _hallouminate,
        "chatgpt": _chatgpt,
        EXTRA_TOOLSET: _extra,
    }
)


@dataclass(frozen=True)
class Selection:
    names: tuple[str, ...]
    tools: tuple[AnyTool, ...]
    resources: tuple[ResourceSpec, ...] = ()
    templates: tuple[ResourceTemplateSpec, ...] = ()
    prompts: tuple[PromptSpec, ...] = ()
    unknown: FailureStyle | None = None  # how a tool not offered is refused: the first set's way

    @property
    def is_root(self) -> bool:
        """The root endpoint's selection: its tools are ragdown's with a `folder` argument, plus
        `ragdown_folders` (`ROOT_TOOLS`), and no folder's title describes them."""
        return any(t.name == FOLDERS.name for t in self.tools)

    def instructions(self, title: str) -> str:
        """The server's instructions: each set's for a folder titled `title`; the root endpoint's own at `/mcp`
        (its title names no folder)."""
        return "\n\n".join(
            root_instructions()
            if self.is_root and name == DEFAULT_TOOLSET
            else SETS[name].instructions(title)
            for name in self.names
        )


ROOT_SETS = (DEFAULT_TOOLSET, EXTRA_TOOLSET, "chatgpt")


def select_root(raw: str | None) -> Selection:
    """The tools of the root endpoint `/mcp` for a `toolset` value: ragdown's own with a `folder` argument
    (and `ragdown_folders`), its `extra` set the same way, and the `chatgpt` set, which searches every folder
    the caller sees; no other set (their tools work in one folder)."""
    from ragdown.tools.catalog import ROOT_TOOLS
    from ragdown.tools.root import with_folder

    names = parse(raw)
    if not set(names) <= set(ROOT_SETS):
        raise bad_request(
            f"the root endpoint /mcp offers the tool sets {', '.join(ROOT_SETS)} only; the others work in one "
            "folder: /mcp/<folder>?toolset=…"
        )
    tools: list[AnyTool] = []
    for name in names:
        if name == DEFAULT_TOOLSET:
            tools += ROOT_TOOLS
        elif name == EXTRA_TOOLSET:
            tools += [with_folder(t) for t in SETS[name].tools]
        else:
            tools += SETS[name].tools
    return Selection(names, tuple(tools))


def parse(raw: str | None) -> tuple[str, ...]:
    """The set names of a `toolset` value (`markindex`, `ragdown, markindex`); unknown ones refused."""
    names = tuple(dict.fromkeys(n.strip().lower() for n in (raw or DEFAULT_TOOLSET).split(",") if n.strip()))
    if not names:
        return (DEFAULT_TOOLSET,)
    unknown = [n for n in names if n not in SETS]
    if unknown:
        raise bad_request(f"unknown tool set {', '.join(unknown)!r}: the sets are {', '.join(SETS)}")
    return names


def select(raw: str | None) -> Selection:
    """The tools of a `toolset` value: one set, or the union of several whose tool names do not clash."""
    names = parse(raw)
    owner: dict[str, str] = {}
    tools: list[AnyTool] = []
    for name in names:
        for tool in SETS[name].tools:
            if tool.name in owner:
                raise Refusal(
                    "invalid",
                    f"the tool sets {owner[tool.name]} and {name} both have a tool named {tool.name}: "
                    "they cannot be offered together",
                )
            owner[tool.name] = name
            tools.append(tool)
    sets = [SETS[name] for name in names]
    return Selection(
        names,
        tuple(tools),
        resources=tuple(r for s in sets for r in s.resources),
        templates=tuple(r for s in sets for r in s.templates),
        prompts=tuple(p for s in sets for p in s.prompts),
        unknown=sets[0].unknown,
    )


__all__ = [
    "DEFAULT_TOOLSET",
    "EXTRA_TOOLSET",
    "SETS",
    "Selection",
    "ToolSet",
    "parse",
    "ragdown_instructions",
    "root_instructions",
    "select",
    "select_root",
]
