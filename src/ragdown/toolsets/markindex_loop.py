"""MarkIndex's `retrieve()`: a model walks the markindex tools (`toolsets/markindex.py`) with MarkIndex's
agent instructions and the result is evidence only: the line ranges it cites (or, citing none, the nodes it
read), each re-read from the document by range with its title path, never text the model wrote.

The loop stops when the model answers without a tool call (`done`), after `max_steps` model calls
(`max_steps`), or when the input tokens spent reach `max_input_tokens` (`max_input_tokens`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragdown.core.errors import Refusal
from ragdown.documents import decode_text
from ragdown.documents.tree import Node
from ragdown.llm.providers import ChatModel, ToolDef, Turn, Usage
from ragdown.tools.base import Args, Failure, refuse_invalid
from ragdown.tools.context import ToolContext
from ragdown.tools.read import file_lines, locate_document
from ragdown.toolsets import markindex
from ragdown.vault.sandbox import read_plain

DEFAULT_MAX_STEPS = 12
DEFAULT_MAX_INPUT_TOKENS = 200_000
MAX_EVIDENCE = 20
RETRIEVE_INSTRUCTIONS = markindex.INSTRUCTIONS + (
    " You are gathering evidence for the question, not writing an answer: when you have read what answers "
    "it, reply without calling a tool and list each passage that answers it as [doc_path, L<start>-<end>], "
    "one per line."
)
_CITE = re.compile(r"\[\s*([^\[\],\n]+?)\s*,\s*L(\d+)\s*(?:-\s*L?(\d+))?\s*\]")

_FUNCTIONS: dict[str, tuple[type[Args], Callable[[ToolContext, Any], str]]] = {
    "browse_documents": (markindex.BrowseArgs, markindex.browse),
    "get_document": (markindex.DocumentArgs, markindex.get_document),
    "get_document_structure": (markindex.StructureArgs, markindex.get_structure),
    "get_node_content": (markindex.NodeContentArgs, markindex.get_node_content),
    "search_documents": (markindex.SearchArgs, markindex.search),
}


def tool_defs() -> list[ToolDef]:
    """The five tools as the model sees them: the markindex set's names, descriptions and schemas."""
    return [ToolDef(t.name, t.description, t.input_schema()) for t in markindex.TOOLS if t.name in _FUNCTIONS]


def call_tool(ctx: ToolContext, name: str, arguments: dict[str, Any]) -> str:
    """One markindex tool call, answered as the tool set answers it (a JSON envelope, failures too)."""
    entry = _FUNCTIONS.get(name)
    try:
        if entry is None:
            raise Refusal(
                "invalid", f"no tool {name!r}: the tools are {', '.join(_FUNCTIONS)}", "INVALID_INPUT"
            )
        args_type, fn = entry
        try:
            parsed = args_type.model_validate(arguments)
        except ValueError as err:
            from pydantic import ValidationError

            if isinstance(err, ValidationError):
                raise refuse_invalid(err, args_type, name) from None
            raise
        return fn(ctx, parsed)
    except Refusal as err:
        return markindex.failure_envelope(Failure(err.message, err.kind, err.code, err.details))


@dataclass(frozen=True)
class Evidence:
    doc_path: str
    start_line: int
    end_line: int
    title_path: list[str]
    text: str

    def as_json(self) -> dict[str, Any]:
        return {
            "doc_path": self.doc_path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "title_path": self.title_path,
            "text": self.text,
        }

    def cite(self) -> str:
        return f"[{self.doc_path}, L{self.start_line}-{self.end_line}]"


@dataclass
class Retrieval:
    question: str
    model: str
    evidence: list[Evidence] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    steps: int = 0
    tool_calls: int = 0
    stop_reason: str = "done"

    def as_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "model": self.model,
            "evidence": [e.as_json() for e in self.evidence],
            "usage": self.usage.as_dict(),
            "steps": self.steps,
            "tool_calls": self.tool_calls,
            "stop_reason": self.stop_reason,
        }

    def as_text(self) -> str:
        out = []
        for e in self.evidence:
            out.append(f"{e.cite()} {' > '.join(e.title_path)}")
            out.extend(f"{n:>6}  {line}" for n, line in enumerate(e.text.split("\n"), e.start_line))
            out.append("")
        if not self.evidence:
            out.append("no evidence found")
        u = self.usage
        out.append(
            f"stop: {self.stop_reason} · {self.steps} steps · {self.tool_calls} tool calls · "
            f"{u.input_tokens} input + {u.output_tokens} output tokens"
        )
        return "\n".join(out) + "\n"


def retrieve(
    ctx: ToolContext,
    model: ChatModel,
    question: str,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
) -> Retrieval:
    if not question.strip():
        raise Refusal("invalid", "the question is empty")
    if max_steps < 1 or max_input_tokens < 1:
        raise Refusal("invalid", "max steps and max input tokens must be positive")
    result = Retrieval(question, model.name)
    tools = tool_defs()
    turns: list[Turn] = [Turn("user", question)]
    read: list[tuple[str, int, int]] = []  # (doc_path, start, end) of the nodes get_node_content served
    final = ""
    result.stop_reason = "max_steps"
    while result.steps < max_steps:
        if result.usage.input_tokens >= max_input_tokens:
            result.stop_reason = "max_input_tokens"
            break
        reply = model.complete(RETRIEVE_INSTRUCTIONS, turns, tools)
        result.steps += 1
        result.usage.add(reply)
        if not reply.tool_calls:
            final = reply.text
            result.stop_reason = "done"
            break
        turns.append(Turn("assistant", reply.text, tuple(reply.tool_calls)))
        for call in reply.tool_calls:
            result.tool_calls += 1
            answer = call_tool(ctx, call.name, call.arguments)
            if call.name == "get_node_content":
                read.extend(_served(answer))
            turns.append(Turn("tool", answer, tool_call_id=call.id))
    ranges = _cited(final) or read
    result.evidence = _evidence(ctx, ranges)
    return result


def _served(answer: str) -> list[tuple[str, int, int]]:
    try:
        body = json.loads(answer)
    except ValueError:
        return []
    data = body.get("data") if isinstance(body, dict) and body.get("success") else None
    if not isinstance(data, dict):
        return []
    return [
        (str(data.get("doc_path")), int(n["start_line"]), int(n["end_line"]))
        for n in data.get("nodes") or []
        if isinstance(n, dict) and isinstance(n.get("start_line"), int) and isinstance(n.get("end_line"), int)
    ]


def _cited(text: str) -> list[tuple[str, int, int]]:
    out = []
    for m in _CITE.finditer(text):
        start = int(m.group(2))
        end = int(m.group(3) or start)
        out.append((m.group(1).strip().strip("`'\""), min(start, end), max(start, end)))
    return out


def _evidence(ctx: ToolContext, ranges: list[tuple[str, int, int]]) -> list[Evidence]:
    """Each range re-read from its document (a document that is not there, or lines past its end, dropped);
    overlapping or touching ranges of one document merged."""
    store = ctx.store()
    merged: dict[str, list[list[int]]] = {}
    order: list[str] = []
    for doc, start, end in ranges:
        try:
            docs_path, _anchor, _via = locate_document(ctx, store, doc)
        except Refusal:
            continue
        if docs_path not in merged:
            merged[docs_path] = []
            order.append(docs_path)
        merged[docs_path].append([start, end])
    out: list[Evidence] = []
    for docs_path in order:
        data = read_plain(ctx.docs_root, docs_path)
        if data is None:
            continue
        lines = file_lines(decode_text(data)[0])
        tree = store.tree_of(docs_path)
        spans: list[list[int]] = []
        for start, end in sorted(merged[docs_path]):
            start, end = max(1, start), min(end, len(lines))
            if start > end:
                continue
            if spans and start <= spans[-1][1] + 1:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        for start, end in spans:
            out.append(
                Evidence(
                    ctx.scope.view(docs_path),
                    start,
                    end,
                    title_path(tree, start) if tree else [],
                    "\n".join(lines[start - 1 : end]),
                )
            )
    return out[:MAX_EVIDENCE]


def title_path(tree: Node, line: int) -> list[str]:
    """The titles from the document down to the deepest node holding `line`."""
    path = [tree.title] if tree.title else []
    node = tree
    while node.children:
        inner = next((c for c in node.children if c.start_line <= line <= c.end_line), None)
        if inner is None:
            break
        node = inner
        if (
            node.title and node.kind != "chunk" and path[-1:] != [node.title]
        ):  # the H1 is the document's title
            path.append(node.title)
    return path
