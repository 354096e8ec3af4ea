"""Plain-text files (issue 21, ReadmeDB's file names): `todo.txt` and `notes.json` written through the
readmedb tool set are kept, listed, read back, found by name and content, versioned, and shown as text by
ragdown's own faces (ragdown_read_doc, the web UI's `/api`, the `ragdown://` resources); ragdown's own
write tools keep to Markdown and say where plain text is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import write
from tests.http.conftest import StartServer
from tests.http.test_mcp_http import mcp_client, text_of

pytestmark = pytest.mark.anyio

TODO = "- buy oat milk\n- call the plumber about the <boiler> & the tap\n"
NOTES = '{"project": "zeppelin", "owner": "ada"}\n'


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def js(client: Client, tool: str, **args: object) -> Any:
    return json.loads(await text_of(client, tool, **args))


async def error_of(client: Client, tool: str, **args: object) -> str:
    result = await client.call_tool(tool, dict(args))
    assert result.is_error, result.content
    return "".join(getattr(c, "text", "") for c in result.content)


async def test_plain_text_written_through_readmedb_is_kept_found_versioned_and_shown_as_text(
    docs: Path, start_app: StartServer
) -> None:
    write(docs, "home/.ragdown.json", json.dumps({"mcp": True}))
    write(docs, "home/start.md", "# Start\n\nA Markdown note.\n")
    server = start_app(docs)
    async with mcp_client(server, "/mcp/home?toolset=readmedb,ragdown") as client:
        for name, content in (("todo.txt", TODO), ("data/notes.json", NOTES)):
            await js(client, "write_file", name=name, content=content)
        assert (docs / "home/todo.txt").read_text() == TODO
        listed = await js(client, "list_files")
        assert sorted(f["name"] for f in listed["files"]) == ["data/notes.json", "start.md", "todo.txt"]
        assert (await js(client, "read_file", name="todo.txt"))["content"] == TODO
        assert (await js(client, "read_file", name="data/notes.json"))["content"] == NOTES

        # Found by content and by name (the title is the file's name).
        assert [f["name"] for f in await js(client, "search_files", query="plumber")] == ["todo.txt"]
        assert [f["name"] for f in await js(client, "search_files", query="zeppelin")] == ["data/notes.json"]
        assert "todo.txt" in [f["name"] for f in await js(client, "search_files", query="todo")]
        recall = await text_of(client, "ragdown_recall", query="zeppelin owner", top_k=1)
        assert recall.startswith("[1] data/notes.json:1-1 — notes.json ("), recall

        # Versioned: an update leaves two versions, the first one readable.
        await js(client, "write_file", name="todo.txt", content=TODO + "- water the plants\n")
        history = await js(client, "get_file_history", name="todo.txt")
        assert len(history) == 2, history
        first = min(v["id"] for v in history)
        assert (await js(client, "get_file_version", name="todo.txt", version_id=first))["content"] == TODO

        # ragdown's own read tool shows it as the text it is: no frontmatter, headings or render.
        read = await text_of(client, "ragdown_read_doc", path="todo.txt")
        assert read.splitlines()[0].startswith("todo.txt:1-3 of 3 (hash ")
        assert read.split("\n", 1)[1] == TODO + "- water the plants\n"  # as it is in the file
        outline = await text_of(client, "ragdown_outline", path="data/notes.json")
        assert "notes.json" in outline

        # ragdown's own write tools write Markdown, and say where plain text is written.
        refused = await error_of(client, "ragdown_write", path="other.txt", text="x")
        assert "plain text, not a Markdown document" in refused
        assert "readmedb" in refused
        assert not (docs / "home/other.txt").exists()

        # A name of no document kind is still refused.
        assert (await error_of(client, "write_file", name="photo.png", content="x")).startswith(
            "INVALID_NAME"
        )

        # The ragdown:// resource is served as text/plain.
        resources = (await client.list_resources()).resources
        mimes = {str(r.uri): r.mime_type for r in resources if str(r.uri).startswith("ragdown://")}
        assert mimes["ragdown://todo.txt"] == "text/plain"
        assert mimes["ragdown://start.md"] == "text/markdown"
        contents = (await client.read_resource("ragdown://data/notes.json")).contents
        assert (contents[0].mime_type, getattr(contents[0], "text", None)) == ("text/plain", NOTES)

    # The web UI's /api: listed with its extension, shown as escaped text in a <pre>, never rendered.
    docs_list = server.api.get("/api/docs", params={"folder": "home"}).json()["docs"]
    titles = {d["path"]: d["title"] for d in docs_list}
    assert titles["home/todo.txt"] == "todo.txt"
    assert titles["home/data/notes.json"] == "notes.json"
    doc = server.api.get("/api/doc", params={"path": "home/todo.txt"}).json()
    assert doc["plain"] is True
    assert doc["text"] == TODO + "- water the plants\n"
    assert doc["html"] == (
        '<pre class="plain-text">- buy oat milk\n- call the plumber about the &lt;boiler&gt; &amp; the tap\n'
        "- water the plants\n</pre>"
    )
    assert server.api.get("/api/doc", params={"path": "home/start.md"}).json()["plain"] is False
    hits = server.api.get("/api/search", params={"q": "plumber", "folder": "home"}).json()["hits"]
    assert hits[0]["path"] == "home/todo.txt"

    # The web UI saves it as plain text (an edit against its hash), versioned like any other.
    saved = server.api.post(
        "/api/doc", json={"path": "home/todo.txt", "text": "- done\n", "base_hash": doc["hash"]}
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["warnings"] == []
    assert (docs / "home/todo.txt").read_text() == "- done\n"
    preview = server.api.post("/api/render", json={"path": "home/todo.txt", "text": "# not a <h1>"})
    assert preview.json()["html"] == '<pre class="plain-text"># not a &lt;h1&gt;</pre>'


async def test_binary_content_under_a_plain_text_name_is_refused_and_changes_nothing(
    docs: Path, start_app: StartServer
) -> None:
    write(docs, "home/.ragdown.json", json.dumps({"mcp": True}))
    write(docs, "home/start.md", "# Start\n")
    server = start_app(docs)
    async with mcp_client(server, "/mcp/home?toolset=readmedb") as client:
        refused = await error_of(client, "write_file", name="blob.json", content="a\x00b")
        assert refused.startswith("INVALID_INPUT: "), refused
        assert "UTF-8 text without NUL characters" in refused
        assert not (docs / "home/blob.json").exists()
        await js(client, "write_file", name="ok.txt", content="fine")
        assert (await error_of(client, "append_to_file", name="ok.txt", content="\x00")).startswith(
            "INVALID_INPUT: "
        )
        assert (docs / "home/ok.txt").read_text() == "fine"
