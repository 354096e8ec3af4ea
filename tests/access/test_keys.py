"""`keys.KeyStore`: secrets shown once and stored only as their SHA-256, the file readable by its owner
alone, expiry, revocation, names, folders, and a change made by another process seen at once."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragdown.access.caller import ADMIN, NOBODY, Access, access_of
from ragdown.access.keys import KeyStore
from ragdown.core.errors import Refusal


@pytest.fixture
def root(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    for name in ("work", "lab", "home"):
        (docs / name).mkdir(parents=True)
    return docs


def test_a_secret_is_shown_once_and_stored_only_as_its_hash(root: Path) -> None:
    store = KeyStore(root)
    secret, record = store.create("ci", ["work"], "read")
    assert secret.startswith("rdk_")
    assert len(secret) == 4 + 43
    path = root / ".ragdown" / "keys.json"
    raw = path.read_text()
    assert secret not in raw
    assert secret[4:] not in raw
    stored = json.loads(raw)["keys"]
    assert [k["hash"] for k in stored] == [hashlib.sha256(secret.encode()).hexdigest()]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    store.create("second", None, "write")  # a rewrite keeps the mode
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "hash" not in json.dumps([r.as_json() for r in store.list()])
    assert record.as_json()["folders"] == ["work"]


def test_verify_gives_the_keys_access_and_nothing_else(root: Path) -> None:
    store = KeyStore(root)
    secret, record = store.create("ci", ["work", "lab"], "write")
    found = store.verify(secret)
    assert found == record
    access = found.access()
    assert access == Access("key:ci", "write", frozenset({"work", "lab"}), record.id)
    assert access.sees("lab")
    assert not access.sees("home")
    assert access.writes("work")
    assert not access.writes("home")
    assert not access.is_admin
    for wrong in (secret[:-1], secret + "x", "rdk_" + "A" * 43, "", "work"):
        assert store.verify(wrong) is None
    read, _ = store.create("reader", None, "read")
    everything = store.verify(read).access()  # type: ignore[union-attr]
    assert everything.sees("home")
    assert not everything.writes("home")


def expire(root: Path, name: str) -> None:
    """Its time is over (a key is made with an expiry to come; the file is the store's truth)."""
    path = root / ".ragdown" / "keys.json"
    doc = json.loads(path.read_text())
    for key in doc["keys"]:
        if key["name"] == name:
            key["expires_at"] = time.time() - 1
    path.write_text(json.dumps(doc))


def test_an_expired_key_opens_nothing_and_is_listed_as_expired(root: Path) -> None:
    store = KeyStore(root)
    secret, _ = store.create("soon", None, "read", expires_at=time.time() + 3600)
    expire(root, "soon")
    later, _ = store.create(
        "later", None, "read", expires_at=time.time() + 3600, kind="oauth", client="Claude"
    )
    assert store.verify(secret) is None
    live = store.verify(later)
    assert live is not None
    assert live.access().who == "oauth:Claude"
    assert [r.name for r in store.list(kind="oauth")] == ["later"]
    # The expired one goes at the next change, so its name is free again.
    store.create("soon", None, "read")
    assert sorted(r.name for r in store.list()) == ["later", "soon"]


@pytest.mark.parametrize("when", [1, 0, -5.0, "past", float("nan"), float("inf"), True])
def test_a_key_is_never_made_expired(root: Path, when: object) -> None:
    store = KeyStore(root)
    past = time.time() - 1 if when == "past" else when
    with pytest.raises(Refusal) as refused:
        store.create("tmp", ["work"], "read", expires_at=past)  # type: ignore[arg-type]
    assert refused.value.kind == "invalid"
    assert "expires_at" in refused.value.message
    assert not (root / ".ragdown" / "keys.json").exists()
    _, record = store.create("tmp", ["work"], "read", expires_at=time.time() + 60)
    assert record.expires_at is not None
    assert not record.expired()


def test_revoking_by_name_or_id(root: Path) -> None:
    store = KeyStore(root)
    a, ra = store.create("a", None, "read")
    b, rb = store.create("b", None, "read")
    assert store.revoke("a").id == ra.id
    assert store.revoke(rb.id).name == "b"
    assert store.verify(a) is None
    assert store.verify(b) is None
    with pytest.raises(Refusal) as err:
        store.revoke("a")
    assert err.value.kind == "not_found"


def test_names_and_folders_are_checked_before_anything_is_written(root: Path) -> None:
    store = KeyStore(root)
    store.create("ci", ["work"], "read")
    before = (root / ".ragdown/keys.json").read_bytes()
    bad: list[tuple[str, list[str] | None, str]] = [
        ("ci", ["work"], "read"),  # taken
        ("", ["work"], "read"),
        ("x\ny", ["work"], "read"),
        ("n", ["typo"], "read"),  # a folder that does not exist would silently see nothing
        ("n", [], "read"),
        ("n", ["../work"], "read"),
        ("n", [".ragdown"], "read"),
        ("n", None, "admin"),  # RAGDOWN_TOKEN is the only admin
        ("n", None, "owner"),
    ]
    for name, folders, role in bad:
        with pytest.raises(Refusal) as err:
            store.create(name, folders, role)  # type: ignore[arg-type]
        assert err.value.kind == "invalid", (name, folders, role)
    assert (root / ".ragdown/keys.json").read_bytes() == before


def test_a_damaged_file_opens_nothing_and_is_never_overwritten(root: Path) -> None:
    store = KeyStore(root)
    secret, _ = store.create("ci", None, "read")
    path = root / ".ragdown/keys.json"
    path.write_text("{not json")
    assert store.verify(secret) is None
    with pytest.raises(Refusal) as err:
        store.create("other", None, "read")
    assert err.value.kind == "unavailable"
    assert path.read_text() == "{not json"


def test_another_process_sees_a_key_made_and_revoked_here_at_once(root: Path) -> None:
    store = KeyStore(root)  # as a running server holds it: read once, then on each change
    assert store.verify("rdk_" + "x" * 43) is None
    code = (
        "import sys; from pathlib import Path; from ragdown.access.keys import KeyStore; "
        "s, _ = KeyStore(Path(sys.argv[1])).create('elsewhere', ['work'], 'write'); print(s)"
    )
    made = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    secret = made.stdout.strip()
    found = store.verify(secret)
    assert found is not None
    assert found.name == "elsewhere"
    revoke = "import sys; from pathlib import Path; from ragdown.access.keys import KeyStore; KeyStore(Path(sys.argv[1])).revoke('elsewhere')"
    subprocess.run([sys.executable, "-c", revoke, str(root)], check=True)
    assert store.verify(secret) is None


def test_the_keys_file_survives_the_data_dir_and_lives_beside_the_docs(root: Path) -> None:
    KeyStore(root).create("ci", None, "read")
    assert (root / ".ragdown" / "keys.json").is_file()
    assert os.listdir(root / ".ragdown") == ["keys.json"]  # no temp file left behind


def test_access_of_a_scope_no_dispatch_vouched_for_sees_nothing() -> None:
    assert access_of({}) is NOBODY
    assert not NOBODY.sees("work")
    assert access_of({"ragdown.access": ADMIN}) is ADMIN
    assert ADMIN.sees("anything")
    assert ADMIN.is_admin
