"""The route table of REST API v1: every `Endpoint` under `/api/v1/folders/{folder}/`, matched on the raw
path for `http/app.py`'s dispatch, and who may call each (`NEEDS`)."""

from __future__ import annotations

import dataclasses
import re
from typing import Literal
from urllib.parse import quote

from starlette.requests import Request

from ragdown.http.rest.endpoint import PREFIX, Endpoint
from ragdown.http.rest.handlers import (
    append_file,
    changes,
    create_file,
    delete_file,
    diff,
    edit_file,
    empty_trash,
    folders,
    history,
    list_files,
    move_file,
    outline,
    patch_file,
    put_file,
    query,
    read_file,
    related,
    restore_file,
    search,
    search_folders,
    trash,
    tree,
    version,
    whoami,
)
from ragdown.http.rest.models import (
    AppendArgs,
    ChangesAnswer,
    CreateArgs,
    DeleteAnswer,
    DeleteArgs,
    DiffAnswer,
    EmptyTrashAnswer,
    FileAnswer,
    FilesAnswer,
    FolderArgs,
    FoldersAnswer,
    FoldersSearchAnswer,
    HistoryAnswer,
    ListFilesArgs,
    MoveAnswer,
    MoveRestArgs,
    Named,
    OutlineAnswer,
    PatchRestArgs,
    PutArgs,
    QueryAnswer,
    RelatedAnswer,
    RestoreAnswer,
    SearchAnswer,
    SearchFoldersArgs,
    TrashAnswer,
    TreeAnswer,
    VersionAnswer,
    VersionArgs,
    WhoAnswer,
    WriteAnswer,
)
from ragdown.tools.changes import CHANGES, ChangesArgs
from ragdown.tools.history import HISTORY, DiffArgs, RestoreArgs
from ragdown.tools.outline import OUTLINE, OutlineArgs
from ragdown.tools.query import QUERY
from ragdown.tools.query_plan import QueryArgs
from ragdown.tools.read import RECALL, RecallArgs
from ragdown.tools.related import RELATED, RelatedArgs
from ragdown.tools.write import EditArgs
from ragdown.toolsets.readmedb.files import ReadArgs

# -- answers --------------------------------------------------------------------------------------


# -- arguments the tools have no model for ----------------------------------------------------------


# -- one call ---------------------------------------------------------------------------------------


# -- the routes' work -------------------------------------------------------------------------------


# -- the table --------------------------------------------------------------------------------------

FOLDER = f"{PREFIX}/folders/{{folder}}"
FILE = f"{FOLDER}/files/{{path}}"
NAME = {"path": "name"}

ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("GET", f"{PREFIX}/whoami", "whoami", "Who this key is: its role and folders.", FolderArgs,
             WhoAnswer, whoami, index=False),
    Endpoint("GET", f"{PREFIX}/folders", "listFolders", "The folders this key sees.", FolderArgs,
             FoldersAnswer, folders),
    Endpoint("GET", f"{PREFIX}/search", "searchFolders",
             "Hybrid search over every folder this key sees (or the folders named), ranked together.",
             SearchFoldersArgs, FoldersSearchAnswer, search_folders, fixed={"format": "json"},
             tool=RECALL.name),
    Endpoint("GET", f"{FOLDER}/files", "listFiles", "List documents (limit, offset, a subfolder prefix).",
             ListFilesArgs, FilesAnswer, list_files, tool="list_files (readmedb)"),
    Endpoint("POST", f"{FOLDER}/files", "createFile", "Create a document; 409 when the name is taken.",
             CreateArgs, WriteAnswer, create_file, writes=True, status=201),
    Endpoint("GET", f"{FOLDER}/search", "search", "Hybrid search in the folder (ragdown_recall's hits).",
             RecallArgs, SearchAnswer, search, fixed={"format": "json"}, tool=RECALL.name),
    Endpoint("GET", f"{FOLDER}/outline", "outline",
             "The folder's documents, or one document's sections (ragdown_outline).",
             OutlineArgs, OutlineAnswer, outline, tool=OUTLINE.name),
    Endpoint("GET", f"{FOLDER}/changes", "changes",
             "What changed since a time or a version id, newest first: who, size change, sections touched.",
             ChangesArgs, ChangesAnswer, changes, fixed={"format": "json"}, tool=CHANGES.name),
    Endpoint("GET", f"{FOLDER}/related", "related",
             "A note's or a section's neighbours (links, backlinks, shared tags, similar sections), each with why.",
             RelatedArgs, RelatedAnswer, related, fixed={"format": "json"}, tool=RELATED.name),
    Endpoint("POST", f"{FOLDER}/query", "query",
             "Documents filtered and sorted by properties, tags, links, folder and dates, or a Base's view.",
             QueryArgs, QueryAnswer, query, fixed={"format": "json"}, tool=QUERY.name),
    Endpoint("GET", f"{FOLDER}/trash", "listTrash",
             "The folder's deleted documents, most recently deleted first (restore brings one back).",
             FolderArgs, TrashAnswer, trash, tool="ragdown_list (deleted)", index=False),
    Endpoint("DELETE", f"{FOLDER}/trash", "emptyTrash",
             "Empty the folder's trash: every deleted document and all its versions, for good.",
             FolderArgs, EmptyTrashAnswer, empty_trash, writes=True, index=False),
    # Routes below a document come before the document's own: `{path}` takes one segment or more.
    Endpoint("GET", f"{FILE}/history", "history", "A document's versions, newest first (live or deleted).",
             HISTORY.args, HistoryAnswer, history, url_fields={"path": "path"}, fixed={"format": "json"},
             tool=HISTORY.name),
    Endpoint("GET", f"{FILE}/versions/{{version}}", "getVersion", "One version's content.", VersionArgs,
             VersionAnswer, version, url_fields={"path": "name", "version": "version"}),
    Endpoint("GET", f"{FILE}/diff", "diff",
             "A unified diff between version `from` and `to` (left out: the file on disk).",
             DiffArgs, DiffAnswer, diff, url_fields={"path": "path"}, tool="ragdown_diff"),
    Endpoint("GET", f"{FILE}/outline", "documentTree", "A document's whole section tree.", Named,
             TreeAnswer, tree, url_fields=NAME),
    Endpoint("POST", f"{FILE}/restore", "restore",
             "Bring a version back, as a new version; re-creates a deleted document.",
             RestoreArgs, RestoreAnswer, restore_file, writes=True, url_fields={"path": "path"},
             tool="ragdown_restore"),
    Endpoint("POST", f"{FILE}/append", "append",
             "Add content at the end, or at the end of a section; creates a missing document.",
             AppendArgs, WriteAnswer, append_file, writes=True, url_fields=NAME),
    Endpoint("POST", f"{FILE}/patch", "patch",
             "Replace literal text: the first occurrence, the n-th, or all.",
             PatchRestArgs, WriteAnswer, patch_file, writes=True, url_fields=NAME, tool="patch_file (readmedb)"),
    Endpoint("POST", f"{FILE}/edit", "edit", "Replace exact passages, in order, all or nothing.",
             EditArgs, WriteAnswer, edit_file, writes=True, url_fields={"path": "path"},
             tool="ragdown_edit"),
    Endpoint("POST", f"{FILE}/move", "move", "Move or rename a document, rewriting the links to it.",
             MoveRestArgs, MoveAnswer, move_file, writes=True, url_fields={"path": "from"},
             tool="ragdown_move"),
    Endpoint("GET", FILE, "readFile", "Read a document, or lines start_line to end_line.", ReadArgs,
             FileAnswer, read_file, url_fields=NAME, tool="read_file (readmedb)"),
    Endpoint("PUT", FILE, "writeFile",
             "Write a document: creates it, or replaces it (only the version base_hash names, if given).",
             PutArgs, WriteAnswer, put_file, writes=True, url_fields=NAME),
    Endpoint("DELETE", FILE, "deleteFile",
             "Delete a document, into the trash (restore brings it back); purge=true: for good, with every "
             "version (also of a document already in the trash).",
             DeleteArgs, DeleteAnswer, delete_file, writes=True, url_fields=NAME),
)  # fmt: skip

# ReadmeDB's REST routes, verbatim: a key is a namespace, so `/api/v1/files…` work on the one folder of the
# caller's key (`Access.namespace`; any other caller: 400 `not_a_namespace`, naming the routes above). The
# folder routes' own endpoints, each answering the one status ReadmeDB's reference gives it; its DELETE
# deletes for good, as ReadmeDB's does.
NAMESPACE_FILES = f"{PREFIX}/files"
NAMESPACE_ROUTES = {
    (f"{FOLDER}/files", "GET"): ("nsListFiles", 200),
    (f"{FOLDER}/files", "POST"): ("nsCreateFile", 201),
    (FILE, "GET"): ("nsReadFile", 200),
    (FILE, "PUT"): ("nsWriteFile", 200),
    (FILE, "DELETE"): ("nsDeleteFile", 200),
}
ENDPOINTS += tuple(
    dataclasses.replace(
        ep,
        path=ep.path.replace(f"{FOLDER}/files", NAMESPACE_FILES),
        operation_id=NAMESPACE_ROUTES[(ep.path, ep.method)][0],
        summary=f"{ep.summary} In the key's one folder (ReadmeDB's route: a key is a namespace).",
        status=NAMESPACE_ROUTES[(ep.path, ep.method)][1],
        namespace=True,
        # ReadmeDB's DELETE "permanently deletes the file and all version history": no trash here.
        fixed={**ep.fixed, "purge": True} if ep.method == "DELETE" else ep.fixed,
    )
    for ep in ENDPOINTS
    if (ep.path, ep.method) in NAMESPACE_ROUTES
)


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{\w+\})", template)
    regex = "".join(
        f"(?P<{p[1:-1]}>.+)"
        if p == "{path}"
        else f"(?P<{p[1:-1]}>[^/]+)"
        if p.startswith("{")
        else re.escape(p)
        for p in parts
    )
    return re.compile(f"^{regex}$")


# template -> method -> endpoint, in matching order (the table's)
ROUTES: dict[str, dict[str, Endpoint]] = {}
for _ep in ENDPOINTS:
    ROUTES.setdefault(_ep.path, {})[_ep.method] = _ep
_PATTERNS = [(_pattern(t), t) for t in ROUTES]


def match(raw_path: str) -> tuple[str, dict[str, str]] | None:
    """The template a request path (percent-encoded, as sent) falls under, and its raw parameters."""
    path = raw_path.rstrip("/")
    for pattern, template in _PATTERNS:
        found = pattern.match(path)
        if found:
            return template, found.groupdict()
    return None


def is_v1(path: str) -> bool:
    """Whether a request path is REST v1's (whose every error answer carries a `code`)."""
    return path == PREFIX or path.startswith(PREFIX + "/")


def route_of(request: Request) -> tuple[str, dict[str, Endpoint]] | None:
    """The template of a `/api/v1` request and its endpoints by method; its URL parameters are put in
    the request's `path_params` (still percent-encoded: each endpoint decodes them)."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1").split("?", 1)[0] if isinstance(raw, bytes) else quote(request.url.path)
    found = match(path)
    if found is None:
        return None
    template, params = found
    request.scope["path_params"] = params
    return template, ROUTES[template]


# What each route needs of its caller, for `http/app.py`'s `NEEDS` (folders are the endpoints' own check).
NEEDS: dict[str, dict[str, Literal["open", "read", "write", "admin"]]] = {
    template: {method: "write" if ep.writes else "read" for method, ep in methods.items()}
    for template, methods in ROUTES.items()
}


__all__ = [
    "ENDPOINTS",
    "NAMESPACE_FILES",
    "NEEDS",
    "PREFIX",
    "ROUTES",
    "Endpoint",
    "is_v1",
    "match",
    "route_of",
]
