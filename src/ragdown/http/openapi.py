"""The OpenAPI 3.1 document of `/api/v1`, served at `GET /api/openapi.json`: generated, never written.

Each operation comes from one `rest.Endpoint`: its parameters and request body from the endpoint's
argument model (a tool's own `Args` where one fits: pydantic's JSON schema, the schema `tools/list` shows
over MCP), its answer from the endpoint's answer model (the very model every answer is dumped through), its
errors from what the route can answer: every route a 400, 401, 403 (a foreign `Origin`, a key's folder or
role), 429 and 503; a route under a folder a 404; a write a 402 (over a quota), 409 and 413. pydantic
writes JSON Schema 2020-12, which is OpenAPI 3.1's own dialect.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response

from ragdown import __version__
from ragdown.http.api.base import Api
from ragdown.http.errors import ok
from ragdown.http.rest.endpoint import Endpoint
from ragdown.http.rest.models import ErrorAnswer
from ragdown.http.rest.routes import ENDPOINTS

OPENAPI = "3.1.0"
REF = "#/components/schemas/{model}"
ERRORS: dict[int, str] = {
    400: "The request cannot be used as it is: a bad argument, path or body.",
    401: "No credential, or not one this server knows.",
    402: "A folder's quota (max_files, max_bytes) would be passed.",
    403: "This key may not do that (its role, a read-only server), or a foreign Origin.",
    404: "No such folder (or one this key does not see), document or version.",
    409: "The name is taken, or base_hash is stale (code `changed`): read it again.",
    413: "Past a size limit: the body (4 MiB), a document (8 MiB) or a folder's max_file_bytes.",
    429: "Too many requests from this key: retry after Retry-After seconds.",
    503: "The index is not ready yet, or the version history is off on this server.",
}
WRITE_ERRORS = (402, 409, 413)
URL_PARAMETERS = {"folder": "A folder of the docs dir.", "path": "A document's path inside the folder."}
TAGS = (
    ("access", "Who the key is and what it sees."),
    ("files", "Documents: list, read, create, write, append, patch, edit, move, delete."),
    ("find", "Search and outline."),
    ("versions", "Every version of every document: history, one version, diff, restore."),
)


@functools.cache
def document() -> dict[str, Any]:
    schemas: dict[str, Any] = {"Error": _schema(ErrorAnswer, "serialization", {})}
    paths: dict[str, dict[str, Any]] = {}
    for ep in ENDPOINTS:
        paths.setdefault(ep.path, {})[ep.method.lower()] = _operation(ep, schemas)
    return {
        "openapi": OPENAPI,
        "info": {
            "title": "ragdown REST API",
            "version": __version__,
            "description": (
                "Folders of Markdown for programs: every route under a folder, JSON errors {error, code}. "
                "Generated from the same argument models as ragdown's MCP tools."
            ),
        },
        "tags": [{"name": name, "description": text} for name, text in TAGS],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "RAGDOWN_TOKEN (the admin), a key (`ragdown keys create`) or an OAuth token.",
                }
            },
        },
        "security": [{"bearer": []}],
    }


def _schema(model: type[BaseModel], mode: str, schemas: dict[str, Any]) -> dict[str, Any]:
    """A model's JSON schema, its nested models moved into `components.schemas`."""
    schema: dict[str, Any] = model.model_json_schema(mode=mode, ref_template=REF)  # type: ignore[arg-type]
    for name, sub in schema.pop("$defs", {}).items():
        schemas.setdefault(name, sub)
    return schema


def _answer_ref(model: type[BaseModel], schemas: dict[str, Any]) -> dict[str, str]:
    if model.__name__ not in schemas:
        schemas[model.__name__] = _schema(model, "serialization", schemas)
    return {"$ref": REF.format(model=model.__name__)}


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter's schema: present or left out, never null."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1:
            out = {k: v for k, v in schema.items() if k != "anyOf"}
            out.update(kept[0])
            if out.get("default", ...) is None:
                out.pop("default")
            return out
    return schema


def _operation(ep: Endpoint, schemas: dict[str, Any]) -> dict[str, Any]:
    args = _schema(ep.args, "validation", schemas)
    properties: dict[str, Any] = dict(args.get("properties", {}))
    required = [name for name in args.get("required", []) if name not in ep.hidden]
    parameters: list[dict[str, Any]] = []
    for param in _url_parameters(ep.path):
        field = ep.url_fields.get(param)
        schema = _without_null(properties[field]) if field in properties else {"type": "string"}
        schema = {k: v for k, v in schema.items() if k not in ("description", "title")}
        if param == "path":
            schema = {"type": "string", "minLength": 1}
        parameters.append(
            {
                "name": param,
                "in": "path",
                "required": True,
                "description": URL_PARAMETERS.get(
                    param, (properties.get(field or "") or {}).get("description", "")
                ),
                "schema": schema,
            }
        )
    visible = {name: prop for name, prop in properties.items() if name not in ep.hidden}
    op: dict[str, Any] = {
        "operationId": ep.operation_id,
        "summary": ep.summary,
        "tags": [_tag(ep)],
        "parameters": parameters,
        "responses": _responses(ep, schemas),
    }
    if ep.tool:
        op["description"] = f"The arguments of the MCP tool `{ep.tool}`."
    if ep.in_body:
        body: dict[str, Any] = {"type": "object", "properties": visible, "additionalProperties": False}
        if required:
            body["required"] = required
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    else:
        for name, prop in visible.items():
            schema = _without_null(prop)
            parameter: dict[str, Any] = {
                "name": name,
                "in": "query",
                "required": name in required,
                "schema": {k: v for k, v in schema.items() if k not in ("description", "title")},
            }
            if "description" in schema:
                parameter["description"] = schema["description"]
            parameters.append(parameter)
    return op


def _url_parameters(template: str) -> list[str]:
    return [part[1:-1] for part in template.split("/") if part.startswith("{")]


def _tag(ep: Endpoint) -> str:
    if ep.operation_id in ("search", "searchFolders", "outline", "documentTree"):
        return "find"
    if not ep.in_folder:
        return "access"
    if ep.operation_id in ("history", "getVersion", "diff", "restore"):
        return "versions"
    return "files"


def _responses(ep: Endpoint, schemas: dict[str, Any]) -> dict[str, Any]:
    answer = {"content": {"application/json": {"schema": _answer_ref(ep.answer, schemas)}}}
    out: dict[str, Any] = {str(ep.status): {"description": "Done.", **answer}}
    if ep.method == "PUT":
        out["200"] = {"description": "Replaced.", **answer}
        out["201"] = {"description": "Created.", **answer}
    codes = [400, 401, 403, 429, 503]
    if ep.in_folder or "folder" in ep.args.model_fields:  # a folder in the URL or the key's, or the query's
        codes.append(404)
    if ep.writes:
        codes.extend(WRITE_ERRORS)
    error = {"content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}}}
    for code in sorted(codes):
        out[str(code)] = {"description": ERRORS[code], **error}
    out["429"]["headers"] = {
        "Retry-After": {
            "description": "Seconds until a request is allowed again.",
            "schema": {"type": "integer"},
        }
    }
    out["401"]["headers"] = {
        "WWW-Authenticate": {
            "description": "Bearer, with where to get a token.",
            "schema": {"type": "string"},
        }
    }
    return out


async def openapi_json(_api: Api, _request: Request) -> Response:
    """`GET /api/openapi.json` (open: the document holds no data)."""
    return ok(document())


__all__ = ["document", "openapi_json"]
