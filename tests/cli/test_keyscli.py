"""`ragdown keys create | list | revoke` on RAGDOWN_DOCS_DIR."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from ragdown.access.keys import KeyStore
from ragdown.cli.main import main


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    docs = tmp_path / "docs"
    for name in ("work", "lab"):
        (docs / name).mkdir(parents=True)
    monkeypatch.setenv("RAGDOWN_DOCS_DIR", str(docs))
    return docs


def test_create_prints_the_secret_once_and_list_never_does(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "create", "--name", "agent", "--folders", "work,lab", "--role", "write"]) == 0
    out = capsys.readouterr()
    secret = out.out.strip()
    assert secret.startswith("rdk_")
    assert "shown this once" in out.err
    record = KeyStore(root).verify(secret)
    assert record is not None
    assert (record.name, record.role, record.folders) == ("agent", "write", ("lab", "work"))
    assert stat.S_IMODE((root / ".ragdown/keys.json").stat().st_mode) == 0o600

    assert main(["keys", "create", "--name", "all", "--all", "--role", "read", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["key"]["folders"] is None
    assert made["secret"].startswith("rdk_")

    assert main(["keys", "list"]) == 0
    listing = capsys.readouterr().out
    assert "agent  write  lab,work" in listing
    assert "all  read  (all)" in listing
    assert "rdk_" not in listing
    assert main(["keys", "list", "--json"]) == 0
    keys = json.loads(capsys.readouterr().out)["keys"]
    assert [k["name"] for k in keys] == ["agent", "all"]
    assert all("hash" not in k and "secret" not in k for k in keys)


def test_revoke_by_name_or_id(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret, record = KeyStore(root).create("ci", ["work"], "read")
    assert main(["keys", "revoke", "ci"]) == 0
    assert f"revoked ci ({record.id})" in capsys.readouterr().out
    assert KeyStore(root).verify(secret) is None
    _, other = KeyStore(root).create("again", ["work"], "read")
    assert main(["keys", "revoke", other.id, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["revoked"]["name"] == "again"
    assert main(["keys", "revoke", "ci"]) == 2
    assert "no key with the id or name ci" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--name", "x", "--folders", "typo", "--role", "read"], "no such folder: typo"),
        (
            ["--name", "x", "--all", "--role", "read", "--expires-days", "0"],
            "--expires-days must be more than 0",
        ),
    ],
)
def test_create_refuses_with_a_clear_message(
    root: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["keys", "create", *args]) == 2
    assert message in capsys.readouterr().err
    assert KeyStore(root).list() == []


def test_create_needs_folders_or_all_and_a_role(root: Path) -> None:
    with pytest.raises(SystemExit):
        main(["keys", "create", "--name", "x", "--role", "read"])
    with pytest.raises(SystemExit):
        main(["keys", "create", "--name", "x", "--all", "--folders", "work", "--role", "read"])
    with pytest.raises(SystemExit):
        main(["keys", "create", "--name", "x", "--all", "--role", "admin"])
