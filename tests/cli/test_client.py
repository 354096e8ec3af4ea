"""The CLI client (`ragdown login`, `ls`, `cat`, `write`…) end to end against a real `ragdown serve`: every
command, `--json`, and the one-line message and exit code of each refusal (401, 403, 404, 409, 429).

The client runs in this process (`cli.main`, as the `ragdown` script calls it) so the many commands cost
no interpreter start-up each; one test runs it as its own process too."""

from __future__ import annotations

import io
import json
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragdown.access.keys import KeyStore
from ragdown.cli.main import main
from tests.conftest import REPO, ServeProcess, isolated_env, start_serve, write

TOKEN = "client-test-token-0123456789"
RATE_LIMIT = 200  # requests a minute per key: more than a test here makes, few enough to spend at once


@dataclass(frozen=True)
class Served:
    url: str
    docs: Path
    writer: str  # a write key for `work`
    reader: str  # a read key for `work`
    limited: str  # a read key the rate-limit test spends


def serve(home: Path, docs: Path, **env: str) -> ServeProcess:
    variables = {
        "RAGDOWN_DOCS_DIR": str(docs),
        "RAGDOWN_DATA_DIR": str(home / "data"),
        "RAGDOWN_TOKEN": TOKEN,
    }
    server = start_serve(home, {**variables, **env})
    server.wait_synced()
    return server


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("client")
    docs = home / "docs"
    write(
        docs,
        "work/a.md",
        "# Alpha\n\nNightly snapshots of the billing database.\n\n## Restore\n\nRun pg_restore.\n",
    )
    write(docs, "work/notes/b.md", "# Bee\n\nSee [[a]] for the backups.\n")
    write(docs, "lab/c.md", "# Lab\n\nThe centrifuge protocol.\n")
    store = KeyStore(docs)
    writer, _ = store.create("writer", ["work"], "write")
    reader, _ = store.create("reader", ["work"], "read")
    limited, _ = store.create("limited", ["work"], "read")
    server = serve(home, docs, RAGDOWN_RATE_LIMIT=str(RATE_LIMIT))
    try:
        yield Served(server.url, docs, writer, reader, limited)
    finally:
        server.stop()


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Ragdown = Callable[..., Run]


@pytest.fixture
def ragdown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Ragdown:
    """`ragdown(*args, stdin=None)`: the `ragdown` command in this process, with its own config dir."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("RAGDOWN_URL", "RAGDOWN_API_KEY"):
        monkeypatch.delenv(name, raising=False)

    def run(*args: str, stdin: str | None = None) -> Run:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def ok(result: Run) -> Run:
    assert result.code == 0, result.err
    assert result.err == "" or result.err.startswith("warning:"), result.err
    return result


def failed(result: Run, code: int = 1) -> str:
    """The one line a failure prints on stderr."""
    assert result.code == code, (result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("ragdown: ")
    return lines[0]


def test_login_whoami_logout(
    served: Served, ragdown: Ragdown, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config/ragdown/client.json"
    assert "no server" in failed(ragdown("whoami"), 2)

    line = failed(ragdown("login", "--url", served.url, "--key", "rdk_wrong"))
    assert "did not accept the key" in line
    assert "ragdown login" in line
    assert not config.exists()

    done = ok(ragdown("login", "--url", served.url + "/", "--key", served.writer))
    assert done.out.strip() == f"logged in to {served.url} as key:writer (write): work; saved in {config}"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE(config.parent.stat().st_mode) == 0o700
    assert json.loads(config.read_text()) == {"url": served.url, "key": served.writer}

    assert ok(ragdown("whoami")).out.strip() == f"key:writer (write): work on {served.url}"
    who = ok(ragdown("whoami", "--json")).json()
    assert (who["who"], who["role"], who["folders"]) == ("key:writer", "write", ["work"])

    # RAGDOWN_API_KEY and RAGDOWN_URL win over the saved ones
    monkeypatch.setenv("RAGDOWN_API_KEY", TOKEN)
    assert ok(ragdown("whoami")).out.startswith("admin (admin): every folder")
    monkeypatch.delenv("RAGDOWN_API_KEY")

    assert ok(ragdown("logout")).out.strip() == f"removed {config}"
    assert not config.exists()
    assert ok(ragdown("logout")).out.strip() == "not logged in"


def test_documents_end_to_end(served: Served, ragdown: Ragdown, tmp_path: Path) -> None:
    ok(ragdown("login", "--url", served.url, "--key", served.writer))
    assert ok(ragdown("ls")).out.splitlines() == ["work/\t2 documents\twork"]
    assert ok(ragdown("ls", "work")).out.splitlines() == ["work/a.md", "work/notes/b.md"]
    assert ok(ragdown("ls", "work/notes")).out.splitlines() == ["work/notes/b.md"]
    page = ragdown("ls", "work", "--limit", "1")
    assert page.out.splitlines() == ["work/a.md"]
    assert page.err == "… 1 more: --offset 1\n"
    assert ok(ragdown("ls", "work", "--json")).json()["total"] == 2

    assert ok(ragdown("cat", "work/a.md")).out.startswith("# Alpha\n\nNightly")
    assert ok(ragdown("cat", "work/a.md", "--lines", "5:7")).out == "## Restore\n\nRun pg_restore.\n"
    assert ok(ragdown("cat", "work/a.md", "--lines", "7")).out == "Run pg_restore.\n"
    read = ok(ragdown("cat", "work/a.md", "--json")).json()
    assert read["name"] == "a.md"
    assert len(read["hash"]) == 64

    # write: a new document from the argument, then -n refuses to overwrite it, then stdin replaces it
    made = ok(ragdown("write", "work/new.md", "# New\n"))
    assert made.out.startswith("created work/new.md (hash ")
    refusal = failed(ragdown("write", "work/new.md", "# Other\n", "-n"))
    assert refusal == "ragdown: conflict: new.md already exists (-n: left as it is)"
    assert (served.docs / "work/new.md").read_text() == "# New\n"
    forged = failed(ragdown("write", "work/forged\n- evil.md", "# X\n"))  # one line, nothing written
    assert "names must not hold control characters (here U+000A)" in forged
    assert ok(ragdown("write", "work/new.md", stdin="# New 2\n\n[[nowhere]]\n")).out.startswith(
        "wrote work/new.md"
    )
    assert (
        "warning: line 1: [[nowhere]] links to nothing"
        in ragdown("write", "work/new.md", stdin="[[nowhere]]\n").err
    )
    source = tmp_path / "src.md"
    source.write_text("# From a file\n")
    ok(ragdown("write", "work/new.md", "--file", str(source)))
    assert (served.docs / "work/new.md").read_text() == "# From a file\n"
    stale = failed(ragdown("write", "work/new.md", "x", "--base-hash", "0" * 64))
    assert stale.startswith("ragdown: conflict: new.md changed on disk since it was opened")

    assert ok(ragdown("append", "work/new.md", "More.")).out.startswith("appended to work/new.md")
    assert (served.docs / "work/new.md").read_text() == "# From a file\n\nMore.\n"
    patched = ok(ragdown("patch", "work/new.md", "More", "Less", "--json")).json()
    assert patched["replaced"] == 1
    assert ok(ragdown("patch", "work/new.md", "e", "E", "--all")).out.startswith("replaced 2 in work/new.md")

    moved = ok(ragdown("mv", "work/new.md", "work/old/moved.md"))
    assert moved.out.strip() == "moved work/new.md to work/old/moved.md"
    assert "stays inside its folder" in failed(ragdown("mv", "work/a.md", "lab/a.md"), 2)

    history = ok(ragdown("history", "work/old/moved.md")).out.splitlines()
    assert history[0].startswith("work/old/moved.md: ")
    assert any(" by rest (key:writer)" in line for line in history[1:])
    versions = ok(ragdown("history", "work/old/moved.md", "--json")).json()["versions"]
    first = versions[-1]["version"]
    assert ok(ragdown("version", "work/old/moved.md", str(first))).out == "# New\n"
    diff = ok(ragdown("diff", "work/old/moved.md", str(first))).out
    assert "-# New" in diff
    assert "+# From a filE" in diff
    assert "no differences" in ok(ragdown("diff", "work/old/moved.md", str(first), str(first))).out

    deleted = ok(ragdown("rm", "work/old/moved.md"))
    assert deleted.out.startswith("deleted work/old/moved.md (in the trash")
    assert not (served.docs / "work/old/moved.md").exists()
    trash = ok(ragdown("trash", "work")).out.splitlines()
    assert trash[0].startswith("work/old/moved.md  deleted ")
    assert "  last v" in trash[0]
    assert " by rest (key:writer), " in trash[0]
    assert trash[-1] == "bring one back: ragdown restore work/PATH VERSION"
    assert "name a folder" in failed(ragdown("trash", "work/old"), 2)
    restored = ok(ragdown("restore", "work/old/moved.md", str(first)))
    assert restored.out.startswith(f"restored work/old/moved.md to version {first} (saved as version ")
    assert (served.docs / "work/old/moved.md").read_text() == "# New\n"

    assert ok(ragdown("trash", "work")).out == "the trash of work is empty\n"
    changed = ok(ragdown("changes", "work/old", "--since", "1h")).out.splitlines()
    assert [line.split("  ")[1:3] for line in changed[:3]] == [
        ["restored", "work/old/moved.md"],
        ["deleted", "work/old/moved.md"],
        ["moved", "work/new.md -> work/old/moved.md"],
    ]
    assert all("  by rest (key:writer)  " in line for line in changed[:2])
    newest = ok(ragdown("changes", "work", "--json", "--limit", "1")).json()
    assert newest["more"] is True
    assert ok(ragdown("changes", "work", "--after-version", str(newest["changes"][0]["id"]))).out == (
        "no changes in work\n"
    )
    hits = ok(ragdown("search", "pg_restore")).out.splitlines()
    assert hits[0].startswith("work/a.md:7-7 — Alpha › Restore (")
    found = ok(ragdown("search", "pg_restore", "--folder", "work", "--top-k", "1", "--json")).json()["hits"]
    assert [h["path"] for h in found] == ["work/a.md"]


def test_each_refusal_is_one_line(served: Served, ragdown: Ragdown, monkeypatch: pytest.MonkeyPatch) -> None:
    ok(ragdown("login", "--url", served.url, "--key", served.reader))
    assert failed(ragdown("write", "work/a.md", "x")).startswith("ragdown: not allowed: ")  # 403: a read key
    assert (served.docs / "work/a.md").read_text().startswith("# Alpha")
    assert (
        failed(ragdown("cat", "work/missing.md")) == "ragdown: not found: no such document: work/missing.md"
    )
    hidden = failed(ragdown("cat", "lab/c.md"))  # a folder this key does not see: as a missing one
    missing = failed(ragdown("cat", "nowhere/c.md"))
    assert hidden.replace("lab", "X") == missing.replace("nowhere", "X")
    assert hidden.startswith("ragdown: not found: no such folder")
    assert failed(ragdown("cat", "a.md"), 2).startswith("ragdown: name a document as FOLDER/PATH.md")
    assert failed(ragdown("cat", "work/a.md", "--lines", "9:3")).startswith("ragdown: refused: start_line 9")

    monkeypatch.setenv("RAGDOWN_API_KEY", "rdk_revoked-or-never-was")
    line = failed(ragdown("ls"))
    monkeypatch.delenv("RAGDOWN_API_KEY")
    assert line.startswith(f"ragdown: {served.url} did not accept the key")  # 401

    monkeypatch.setenv("RAGDOWN_URL", "http://127.0.0.1:9")  # nothing listens there
    assert failed(ragdown("ls")).startswith("ragdown: cannot reach http://127.0.0.1:9")


def test_rate_limited_says_when_to_retry(
    served: Served, ragdown: Ragdown, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGDOWN_URL", served.url)
    monkeypatch.setenv("RAGDOWN_API_KEY", served.limited)
    # The key's minute spent at once, then the command at once; the bucket refills one request every
    # 0.3 s, so on a loaded machine the command may come after a refill and pass: spend again, and retry.
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {served.limited}"}) as spend:
        for _ in range(20):
            for _ in range(RATE_LIMIT * 2):
                if spend.get("/api/v1/whoami").status_code == 429:
                    break
            result = ragdown("whoami")
            if result.code != 0:
                break
    line = failed(result)
    assert line.startswith(f"ragdown: rate limited by {served.url}: retry in ")
    assert line.endswith(" s (Retry-After)")


def test_the_command_as_its_own_process(served: Served, tmp_path: Path) -> None:
    env = isolated_env(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"))

    def ragdown(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ragdown.cli", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    login = ragdown("login", "--url", served.url, "--key", served.writer)
    assert login.returncode == 0, login.stderr
    listed = ragdown("ls", "work", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [f["name"] for f in json.loads(listed.stdout)["files"]][:1] == ["a.md"]
    refused = ragdown("cat", "work/absent.md")
    assert refused.returncode == 1
    assert refused.stderr == "ragdown: not found: no such document: work/absent.md\n"


def test_options_before_between_or_after_the_arguments(
    served: Served, ragdown: Ragdown, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the README writes them: `write F -n TEXT`, `append F --heading H TEXT`; after `--`, text that begins
    with `-`; stdin when the text is left out. In `lab` (the admin's), out of the other tests' `work`."""
    monkeypatch.setenv("RAGDOWN_URL", served.url)
    monkeypatch.setenv("RAGDOWN_API_KEY", TOKEN)
    doc = served.docs / "lab/c1.md"
    assert ok(ragdown("write", "lab/c1.md", "-n", "# C1\n")).out.startswith("created lab/c1.md (hash ")
    refusal = failed(ragdown("write", "lab/c1.md", "-n", "# C1 again"))  # a conflict (1), no usage error (2)
    assert refusal == "ragdown: conflict: c1.md already exists (-n: left as it is)"
    assert failed(ragdown("write", "-n", "lab/c1.md", "# C1 again")) == refusal
    assert doc.read_text() == "# C1\n"

    ok(ragdown("append", "lab/c1.md", "--heading", "C1", "under heading"))
    ok(ragdown("append", "--heading", "C1", "lab/c1.md", "- a dash item"))
    ok(ragdown("append", "--heading", "C1", "--", "lab/c1.md", "-x"))
    ok(ragdown("append", "lab/c1.md", "--heading", "C1", "--", "--heading"))
    assert doc.read_text() == "# C1\n\nunder heading\n\n- a dash item\n\n-x\n\n--heading\n"

    assert ok(ragdown("write", "-n", "--", "lab/dash.md", "-n")).out.startswith("created lab/dash.md")
    assert (served.docs / "lab/dash.md").read_text() == "-n"
    assert ok(ragdown("write", "lab/dash.md", "--json", stdin="# Piped\n")).json()["created"] is False
    ok(ragdown("append", "lab/dash.md", "--heading", "Piped", stdin="piped under it"))
    assert (served.docs / "lab/dash.md").read_text() == "# Piped\n\npiped under it\n"

    both = ok(ragdown("cat", "lab/c1.md", "--lines", "1", "lab/dash.md")).out
    assert both == "# C1\n# Piped\n"
    patched = ok(ragdown("patch", "lab/dash.md", "--all", "--", "piped", "-piped-")).out
    assert patched.startswith("replaced 1 in lab/dash.md")
    assert ok(ragdown("diff", "lab/dash.md", "-C", "0", "1", "2")).out.startswith("--- ")
    listed = ragdown("ls", "--limit", "1", "lab")
    assert (listed.code, listed.out) == (0, "lab/c.md\n")
    capsys.readouterr()
    with pytest.raises(SystemExit) as usage:  # one argument too many is still a usage error
        main(["write", "lab/c1.md", "-n", "text", "extra"])
    assert usage.value.code == 2
    assert "unrecognized arguments: extra" in capsys.readouterr().err


def test_destructive_commands_take_yes(
    served: Served, ragdown: Ragdown, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`rm F -y` and `restore F N -y`, as readmedb's `rdb` takes them: a confirmation ragdown never asks for."""
    monkeypatch.setenv("RAGDOWN_URL", served.url)
    monkeypatch.setenv("RAGDOWN_API_KEY", TOKEN)
    ok(ragdown("write", "lab/gone.md", "# Gone\n"))
    assert ok(ragdown("rm", "lab/gone.md", "-y")).out.startswith("deleted lab/gone.md (in the trash")
    versions = ok(ragdown("history", "lab/gone.md", "--json")).json()["versions"]
    first = str(versions[-1]["version"])
    ok(ragdown("restore", "lab/gone.md", first, "-y"))
    assert (served.docs / "lab/gone.md").read_text() == "# Gone\n"
    ok(ragdown("rm", "--yes", "lab/gone.md", "--json"))
    ok(ragdown("restore", "-y", "lab/gone.md", first))
    assert (served.docs / "lab/gone.md").read_text() == "# Gone\n"
    ok(ragdown("rm", "lab/gone.md", "--yes"))

    for command in ("rm", "restore"):
        capsys.readouterr()
        with pytest.raises(SystemExit) as done:
            main([command, "--help"])
        assert done.value.code == 0
        assert "-y, --yes" in capsys.readouterr().out


def test_rm_purge_and_trash_empty_delete_for_good(
    served: Served, ragdown: Ragdown, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21: `rm --purge` deletes a document (or what the trash holds of it) with every version;
    `trash FOLDER --empty` forgets the folder's trash; a read key may do neither."""
    monkeypatch.setenv("RAGDOWN_URL", served.url)
    monkeypatch.setenv("RAGDOWN_API_KEY", served.reader)
    assert "needs a key with the write role" in failed(ragdown("rm", "work/a.md", "--purge"))
    assert "needs a key with the write role" in failed(ragdown("trash", "work", "--empty"))
    monkeypatch.setenv("RAGDOWN_API_KEY", TOKEN)
    ok(ragdown("trash", "lab", "--empty"))  # what the module's other tests left there
    ok(ragdown("write", "lab/secret.md", "# Secret\n"))
    said = ok(ragdown("rm", "lab/secret.md", "--purge", "-y")).out
    assert said == "deleted lab/secret.md for good, with all its versions\n"
    assert "no document" in failed(ragdown("history", "lab/secret.md"))
    for name in ("lab/t1.md", "lab/t2.md"):
        ok(ragdown("write", name, "# T\n"))
        ok(ragdown("rm", name))
    ok(ragdown("rm", "lab/t1.md", "--purge"))  # what the trash holds of it
    assert [e["path"] for e in ok(ragdown("trash", "lab", "--json")).json()["trash"]] == ["t2.md"]
    assert ok(ragdown("trash", "lab", "--empty")).out == "deleted 1 document for good from the trash of lab\n"
    assert ok(ragdown("trash", "lab")).out == "the trash of lab is empty\n"


def test_query_and_related_over_their_routes(served: Served, ragdown: Ragdown) -> None:
    ok(ragdown("login", "--url", served.url, "--key", served.writer))
    ok(ragdown("write", "work/q/one.md", "-n", "---\nstatus: open\nrank: 2\n---\n# One\n\nThe first.\n"))
    two = "---\nstatus: open\nrank: 1\ntags: [q]\n---\n# Two\n\nAfter [[one]].\n"
    ok(ragdown("write", "work/q/two.md", "-n", two))
    table = ok(
        ragdown("query", "work/q", "--where", "status=open", "--sort", "rank", "--columns", "path,rank")
    )
    assert table.out.splitlines() == ["path      rank", "q/two.md  1", "q/one.md  2", "(1-2 of 2 documents)"]
    down = ok(
        ragdown("query", "work", "-w", "rank >= 1", "--sort", "rank:desc", "--json", "--limit", "1")
    ).json()
    assert (down["total"], down["more"], [r["path"] for r in down["rows"]]) == (2, True, ["q/one.md"])
    assert [r["path"] for r in ok(ragdown("query", "work", "--tag", "q", "--json")).json()["rows"]] == [
        "q/two.md"
    ]
    assert "--where takes KEY OP VALUE" in failed(ragdown("query", "work", "--where", "rank"), 2)
    near = ok(ragdown("related", "work/q/one.md")).out.splitlines()
    assert near[0].startswith("work/q/two.md:8  [backlink")
    assert near[0].endswith("  Two — After [[one]].")
    body = ok(ragdown("related", "work/q/two.md", "--json", "--budget", "1")).json()
    assert body["related"][0]["path"] == "q/one.md"
    assert "name a document as FOLDER/PATH" in failed(ragdown("related", "work"), 2)
