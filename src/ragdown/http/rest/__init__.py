"""REST API v1 (`/api/v1`): ragdown for programs, every route under a folder, JSON in and out.

ReadmeDB's file routes (`GET/POST /files`, `GET/PUT/DELETE /files/{path}`, its names: `name`, `content`,
`sizeBytes`, `updatedAt`…) plus the rest of what the tools do (search, outline, history, one version, diff,
restore, append, patch, edit, move), each under `/api/v1/folders/{folder}/`, and one search over several
folders (`/api/v1/search`, ranked together: `Scope.over`). Each route is one `Endpoint`:
its argument model (a tool's own `Args` model wherever one fits, so MCP, REST, the OpenAPI document and the
CLI client validate alike), its answer model (what `http/openapi.py` documents and every answer is dumped
through), and the function that runs it: a tool's handler through its `ToolSpec` (search, history,
outline), or the engine functions the tools call (the sandbox, the write door, `move_path`, `restore`,
`diff_text`, `patch_text`, `apply_replacements`, `append_text`).

Every route checks the caller's `Access` (`access/caller.py`, resolved by `http/app.py`'s dispatch): a folder it
does not see answers the same 404 as a missing folder, a write without write access a 403. Writes go
through the write door (recorded in the history as `rest`, with the caller as the session) and answer after
the index synced, with the write's lints. Errors are `{error, code}` with the status of the refusal's kind
(`http/errors.py`).

A `PUT` replaces a document outright, as ReadmeDB's does (the version it replaced stays in the history);
with `base_hash` it replaces only the version that hash names (409 `changed` otherwise). `POST /files`
creates only (409 when the name is taken).
"""
