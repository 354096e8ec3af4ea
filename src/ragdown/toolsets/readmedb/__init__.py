"""The `readmedb` tool set: ReadmeDB's sixteen tools, names, arguments and answer shapes, over ragdown's
engine, with its resources (`readmedb://policy/naming`, `readmedb://docs/{tool_name}`) and its
`onboard_session` prompt (`toolsets/readmedb/docs.py`).

A ReadmeDB namespace is the endpoint's scope (a folder, or a subfolder), a file name the document's path
inside it. Reads go through `sandbox.read_plain`, writes through the write door (`door.save`, `create`,
`delete`, `move`, and `ragdown_move`'s `move_path`) with the index synced before the answer, search through
the hybrid searcher, versions through the history (`tools/versions.py`, `tools/history.py`). None has
storage or search of its own.

Where ragdown differs, on purpose, and says so in the policy resource: names must be Markdown or plain-text
names (`paths.is_document`; else `INVALID_NAME`), and the plan's quotas are the folder's
(`vault/quota.py`: enforced by the write door, reported by the summary and the write answers). ReadmeDB's 1 MB
per-file limit applies here. A failure is an `isError`
result whose text is `CODE: message`, with ReadmeDB's codes (`readmedb_code`: the one place a ragdown
refusal becomes one).
"""

from __future__ import annotations

from typing import Any

from ragdown.tools.base import Annotations, Args, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.toolsets.readmedb.base import READ_ONLY, NameArgs, failure_text, reader, readmedb_code, writer
from ragdown.toolsets.readmedb.docs import INSTRUCTIONS, PROMPTS, RESOURCES, TEMPLATES
from ragdown.toolsets.readmedb.files import (
    AppendArgs,
    ListArgs,
    MoveFileArgs,
    NoArgs,
    PatchArgs,
    ReadArgs,
    ReadManyArgs,
    WriteArgs,
    append_to_file,
    delete_file,
    list_files,
    move_file,
    patch_file,
    patch_text,
    read_file,
    read_files,
    recommended_action,
    summary,
    write_file,
)
from ragdown.toolsets.readmedb.search import (
    FetchArgs,
    SearchArgs,
    SinceArgs,
    fetch_docs,
    modified_since,
    search_files,
)
from ragdown.toolsets.readmedb.versions import (
    DiffArgs,
    VersionArgs,
    diff_versions,
    file_history,
    file_version,
    restore_version,
)

# -- the tools ------------------------------------------------------------------------------------

WRITES = Annotations(read_only=False, destructive=True)


def _tool(
    name: str, description: str, args: type[Args], handler: Any, annotations: Annotations = READ_ONLY
) -> ToolSpec[Any, ToolContext]:
    return ToolSpec(name, description, args, annotations, handler, failure=failure_text)


TOOLS: tuple[ToolSpec[Any, ToolContext], ...] = (
    _tool(
        "get_namespace_summary",
        "Call once at session start: file count, storage used, the 5 most recent files, and "
        "recommended_action — always follow it.",
        NoArgs,
        reader(summary),
    ),
    _tool(
        "list_files",
        "List files (name, sizeBytes, createdAt, updatedAt): limit 1-500, offset; preview_bytes (1-2000) "
        "includes the first N bytes of each inline.",
        ListArgs,
        reader(list_files),
    ),
    _tool(
        "read_file",
        "Read one file, or lines start_line-end_line (1-indexed, inclusive): content, sizeBytes, updatedAt, "
        "totalLines, partial.",
        ReadArgs,
        reader(read_file),
    ),
    _tool(
        "read_files",
        "Read up to 10 files in one call; a missing one comes back as {name, error}. Use instead of "
        "read_file in a loop.",
        ReadManyArgs,
        reader(read_files),
    ),
    _tool(
        "write_file",
        "Create or overwrite a file (max 1 MB; names end in .md, or .txt, .json… for plain text); the old version stays in the history. "
        "if_not_exists: leave an existing file alone.",
        WriteArgs,
        writer(write_file),
        Annotations(read_only=False, destructive=True, idempotent=True),
    ),
    _tool(
        "patch_file",
        "Replace literal text in a file: the first occurrence, occurrence_index (0-based), or all. Errors "
        "PATCH_NOT_FOUND, PATCH_OUT_OF_RANGE.",
        PatchArgs,
        writer(patch_file),
        Annotations(read_only=False, destructive=True, idempotent=False),
    ),
    _tool(
        "append_to_file",
        "Append content to a file on a new line; creates the file if it does not exist.",
        AppendArgs,
        writer(append_to_file),
        Annotations(read_only=False, destructive=False, idempotent=False),
    ),
    _tool(
        "delete_file",
        "Permanently deletes the file and all version history. Irreversible.",
        NameArgs,
        writer(delete_file),
        Annotations(read_only=False, destructive=True, idempotent=False),
    ),
    _tool(
        "move_file",
        "Rename a file, keeping its history (links to it are updated). overwrite replaces a file at `to` "
        "(into the trash). Errors FILE_NOT_FOUND, FILE_EXISTS.",
        MoveFileArgs,
        writer(move_file),
        Annotations(read_only=False, destructive=True, idempotent=False),
    ),
    _tool(
        "search_files",
        "Find files by keywords (not regex, not glob), most relevant first, each with a snippet of the "
        "matched context. Use instead of list_files + read_files when looking for specific content.",
        SearchArgs,
        reader(search_files),
    ),
    _tool(
        "fetch_docs_for_task",
        "The content of the files that match a task's keywords, most relevant first, within max_chars "
        "(100-100000, default 20000); paths_glob is a name prefix filter. Use instead of search + read.",
        FetchArgs,
        reader(fetch_docs),
    ),
    _tool(
        "list_modified_since",
        "The files changed at or after since_ms (Unix milliseconds), newest first: name, updatedAt.",
        SinceArgs,
        reader(modified_since),
    ),
    _tool(
        "get_file_history",
        "A file's versions, newest first (up to 10): id, savedAt, contentLength. Deleted files keep theirs.",
        NameArgs,
        reader(file_history),
    ),
    _tool(
        "get_file_version",
        "One version of a file (version_id from get_file_history): versionId, savedAt, sizeBytes, content.",
        VersionArgs,
        reader(file_version),
    ),
    _tool(
        "diff_versions",
        "Unified diff of a file from version_id_a to version_id_b (left out: the current file); "
        "context_lines 0-20, default 3.",
        DiffArgs,
        reader(diff_versions),
    ),
    _tool(
        "restore_version",
        "Bring back a version (version_id from get_file_history), saved as a new version (undoable); "
        "re-creates a deleted file.",
        VersionArgs,
        writer(restore_version),
        WRITES,
    ),
)

TOOL_NAMES = tuple(t.name for t in TOOLS)

__all__ = [
    "INSTRUCTIONS",
    "PROMPTS",
    "RESOURCES",
    "TEMPLATES",
    "TOOLS",
    "TOOL_NAMES",
    "failure_text",
    "patch_text",
    "readmedb_code",
    "recommended_action",
]
