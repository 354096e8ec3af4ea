"""One REST route as data (`Endpoint`: method, path template, argument and answer models, the function) and
how a request becomes a call: the caller, the folder's tool context, the arguments parsed by the model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin
from urllib.parse import unquote

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from ragdown.access.caller import Access, access_of, namespace_of
from ragdown.access.scope import Scope
from ragdown.core.errors import Refusal, bad_request, forbidden, not_found
from ragdown.core.paths import is_usable, shown
from ragdown.history.journal import Journal
from ragdown.http.api.base import Api, json_body
from ragdown.http.errors import ok, refused
from ragdown.http.rest.models import Answer
from ragdown.tools.base import Args, argument_names, not_unicode, refuse_invalid, unknown_arguments
from ragdown.tools.context import ToolContext
from ragdown.vault.folders import list_folders

PREFIX = "/api/v1"
WHO = "rest"  # who the version history says made a change through these routes (the caller is the session)


@dataclass(frozen=True)
class Call:
    ctx: ToolContext
    access: Access

    def journal(self) -> Journal:
        return self.ctx.journal(WHO, self.access.who)


@dataclass(frozen=True)
class Reply:
    body: Answer
    status: int = 200


Run = Callable[[Call, Any], Awaitable[Reply]]


@dataclass(frozen=True)
class Endpoint:
    method: Literal["GET", "POST", "PUT", "DELETE"]
    path: str  # a template: `{folder}` one segment, `{path}` one or more, `{version}` one
    operation_id: str
    summary: str
    args: type[Args]
    answer: type[Answer]
    run: Run
    writes: bool = False
    status: int = 200  # the success status; a PUT answers 201 when it created the document
    url_fields: Mapping[str, str] = field(default_factory=dict)  # URL parameter -> argument field
    fixed: Mapping[str, Any] = field(default_factory=dict)  # arguments the route sets (not documented)
    tool: str | None = None  # the MCP tool whose argument model it takes (and, for some, its handler)
    index: bool = True  # waits for the index (whoami does not: it answers during a first index too)
    namespace: bool = False  # ReadmeDB's route (`/api/v1/files…`): on the one folder of the caller's key

    @property
    def under_folder(self) -> bool:
        """Whether its URL names a folder (`{folder}`)."""
        return "{folder}" in self.path

    @property
    def in_folder(self) -> bool:
        """Whether it works in one folder: the URL's, or the key's own (`namespace`)."""
        return self.under_folder or self.namespace

    @property
    def in_body(self) -> bool:
        return self.method in ("POST", "PUT")

    @property
    def hidden(self) -> frozenset[str]:
        """Argument fields the request does not carry in its query or body."""
        return frozenset(self.url_fields.values()) | frozenset(self.fixed)

    async def __call__(self, api: Api, request: Request) -> Response:
        """The route `http/app.py` dispatches to (after its Host/Origin checks and auth)."""
        try:
            reply = await self._reply(api, request)
        except Refusal as err:
            return refused(err, coded=True)
        # ReadmeDB's routes answer the one status its reference gives each (its PUT: 200, created or not).
        status = self.status if self.namespace else reply.status
        return ok(reply.body.model_dump(mode="json", by_alias=True), status)

    async def _reply(self, api: Api, request: Request) -> Reply:
        access = access_of(request.scope)
        params = decoded_params(request.path_params)
        folder = namespace_of(access, self.path) if self.namespace else params.get("folder", "")
        if self.in_folder:
            if not access.sees(folder) or not is_usable(folder) or folder not in list_folders(api.root):
                raise not_found(f"no such folder: {shown(folder)}")
            if self.writes:
                api.refuse_read_only("Changing documents")
                if not access.writes(folder):
                    raise forbidden(f"this key may not change documents in {folder} (it reads only)")
        raw: dict[str, Any] = await self._arguments(request)
        for param, name in self.url_fields.items():
            raw[name] = params[param]
        raw.update(self.fixed)
        args = parse(self.args, raw)
        ctx = ToolContext(runtime=api.runtime, scope=Scope(root=api.root, folder=folder), access=access)
        if self.index:
            await ctx.ready()
        return await self.run(Call(ctx, access), args)

    async def _arguments(self, request: Request) -> dict[str, Any]:
        """The query's parameters (a list field's repeated ones as a list) or the body's fields; a name the
        route does not take is refused, as an MCP tool refuses an unknown argument (its URL's own and the
        fixed ones are not taken either)."""
        if not self.in_body:
            query = request.query_params
            lists = repeatable(self.args)
            given: dict[str, Any] = {k: query.getlist(k) if k in lists else v for k, v in query.items()}
        else:
            body = await json_body(request)
            if not isinstance(body, dict):
                raise bad_request("send a JSON object")
            given = body
        valid = [name for name in argument_names(self.args) if name not in self.hidden]
        unknown = [name for name in given if name not in valid]
        if unknown:
            what = "body field" if self.in_body else "query parameter"
            message, details = unknown_arguments(unknown, valid, what=what)
            raise Refusal("invalid", message, None, details)
        return given


def repeatable(model: type[Args]) -> frozenset[str]:
    """The fields a query string may repeat (`folder=a&folder=b`): those that hold a list."""
    out: set[str] = set()
    for name, info in model.model_fields.items():
        union = get_origin(info.annotation) in (Union, UnionType)
        kinds = get_args(info.annotation) if union else (info.annotation,)
        if any(get_origin(kind) is list for kind in kinds):
            out.add(name)
    return frozenset(out)


def parse(model: type[Args], raw: dict[str, Any]) -> Any:
    """A request's arguments validated by the model (a tool's own, or one of the above)."""
    bad = not_unicode(raw)
    if bad is not None:
        raise bad_request(f"arguments must be Unicode text, and {bad[:40]!r} is not")
    try:
        return model.model_validate(raw)
    except ValidationError as err:
        raise refuse_invalid(err, model) from None


def decoded_params(raw: Mapping[str, str]) -> dict[str, str]:
    """The URL's parameters, percent-decoded (strictly: bytes that are not UTF-8 are refused)."""
    out: dict[str, str] = {}
    for key, value in raw.items():
        try:
            out[key] = "/".join(unquote(part, errors="strict") for part in value.split("/"))
        except UnicodeDecodeError:
            if key == "folder":
                raise not_found("no such folder: (a name that is not UTF-8)") from None
            raise bad_request(f"{key} is not UTF-8 text") from None
    return out
