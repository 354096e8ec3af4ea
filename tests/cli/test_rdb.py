"""ReadmeDB's `rdb` command lines on ragdown's client (issue 21): `edit FILE` ($EDITOR, written back against
the hash it read; a conflict keeps the edit), `ls --since 2h`, `mv --force`, and `READMEDB_URL` /
`READMEDB_API_KEY`. The commands are parsed by `ragdown`'s own parser and run in this process against
`ragdown serve`'s app (in-process, `tests/http/conftest.py`)."""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

import pytest

from ragdown.cli.client import commands
from ragdown.cli.client.remote import ClientError, Remote, Target, target
from ragdown.cli.main import _parser
from tests.conftest import write
from tests.http.conftest import Server, StartServer, start_app  # noqa: F401  (the fixture)

DAY_S = 86_400


@pytest.fixture
def server(start_app: StartServer, docs: Path) -> Server:  # noqa: F811
    write(docs, "notes/CLAUDE.md", "# Claude\n\nAlways run the tests.\n")
    write(docs, "notes/old.md", "# Old\n")
    write(docs, "lab/old.md", "# Lab\n")
    three_days_ago = time.time() - 3 * DAY_S
    for old in ("notes/old.md", "lab/old.md"):
        os.utime(docs / old, (three_days_ago, three_days_ago))
    return start_app(docs)


def rdb(server: Server, capsys: pytest.CaptureFixture[str], *line: str) -> str:
    """One command line (`ragdown`'s parser), run against the app; what it printed."""
    args = _parser().parse_args(list(line))
    remote = Remote(Target(url=server.url, key=None))
    remote.http = server.api
    capsys.readouterr()
    commands.HANDLERS[args.client](args, remote)
    return capsys.readouterr().out


def test_edit_opens_the_editor_and_writes_back(
    server: Server, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR", "sed -i s/Always/Never/")
    said = rdb(server, capsys, "edit", "notes/CLAUDE.md")
    assert said.startswith("wrote notes/CLAUDE.md (hash ")
    assert (server.docs / "notes/CLAUDE.md").read_text() == "# Claude\n\nNever run the tests.\n"
    monkeypatch.setenv("EDITOR", "true")  # closed without a change
    assert rdb(server, capsys, "edit", "notes/CLAUDE.md") == "no change: notes/CLAUDE.md left as it is\n"
    monkeypatch.setenv("EDITOR", 'sh -c \'printf "# New\\n" > "$1"\' editor')  # a new one starts empty
    assert rdb(server, capsys, "edit", "notes/new.md").startswith("created notes/new.md ")
    assert (server.docs / "notes/new.md").read_text() == "# New\n"


def test_an_edit_that_meets_a_change_on_the_server_is_kept_and_said(
    server: Server, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the editor is open, someone else saves the document: nothing is written over it, and the
    edit stays in the temp file, named in the error."""
    doc = server.docs / "notes/CLAUDE.md"
    script = f'sed -i s/Always/Never/ "$1"; printf "Theirs.\\n" >> {shlex.quote(str(doc))}'
    monkeypatch.setenv("EDITOR", f"sh -c {shlex.quote(script)} editor")
    with pytest.raises(ClientError) as refused:
        rdb(server, capsys, "edit", "notes/CLAUDE.md")
    message = refused.value.message
    assert "changed on the server since it was opened" in message
    kept = Path(message.split("it is kept in ")[1].split(":")[0])
    assert kept.read_text() == "# Claude\n\nNever run the tests.\n"
    assert doc.read_text() == "# Claude\n\nAlways run the tests.\nTheirs.\n"
    assert f"ragdown write notes/CLAUDE.md --file {kept}" in message
    kept.unlink()


def test_ls_since_lists_what_changed_lately_newest_first(
    server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    server.api.put("/api/v1/folders/lab/files/fresh.md", json={"content": "# Fresh\n"})
    server.api.put("/api/v1/folders/notes/files/later.md", json={"content": "# Later\n"})
    every = rdb(server, capsys, "ls", "--since", "2h").splitlines()
    assert set(every) == {"notes/CLAUDE.md", "lab/fresh.md", "notes/later.md"}
    assert every[0] == "notes/later.md"  # the newest first
    assert rdb(server, capsys, "ls", "notes", "--since", "2h").splitlines() == [
        "notes/later.md",
        "notes/CLAUDE.md",
    ]
    assert set(rdb(server, capsys, "ls", "notes", "--since", "4d").splitlines()) == {
        "notes/later.md",
        "notes/CLAUDE.md",
        "notes/old.md",
    }
    with pytest.raises(SystemExit):
        _parser().parse_args(["ls", "--since", "two hours"])


def test_mv_force_replaces_the_target(server: Server, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ClientError) as taken:
        rdb(server, capsys, "mv", "notes/CLAUDE.md", "notes/old.md")
    assert taken.value.message.startswith("conflict:")
    assert (server.docs / "notes/old.md").read_text() == "# Old\n"
    said = rdb(server, capsys, "mv", "notes/CLAUDE.md", "notes/old.md", "--force")
    assert said.startswith("moved notes/CLAUDE.md to notes/old.md")
    assert (server.docs / "notes/old.md").read_text().startswith("# Claude")
    assert not (server.docs / "notes/CLAUDE.md").exists()


def test_readmedbs_variables_are_read_after_ragdowns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("RAGDOWN_URL", "RAGDOWN_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("READMEDB_URL", "https://notes.example.com/")
    monkeypatch.setenv("READMEDB_API_KEY", "rdk_from_readmedb")
    assert target() == Target("https://notes.example.com", "rdk_from_readmedb")
    monkeypatch.setenv("RAGDOWN_URL", "https://ragdown.example.com")
    monkeypatch.setenv("RAGDOWN_API_KEY", "rdk_from_ragdown")
    assert target() == Target("https://ragdown.example.com", "rdk_from_ragdown")
