"""ragdown installs on its own: the wheel built from this tree, installed into a fresh virtual environment
with its dependencies from the package index (uv's cache), gives a `ragdown` that serves (the web UI's
files included) and a client that talks to it.

uv builds and installs when it is there (the Makefile puts it in .venv): seconds, the dependencies
linked from its cache; otherwise pip does, which takes longer. Marked `slow`; it runs in `make test`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from ragdown import __version__
from ragdown.access.keys import KeyStore
from tests.conftest import REPO, free_port, isolated_env, write

TOKEN = "wheel-test-token-0123456789"
UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")


def run(args: list[str], *, env: dict[str, str] | None = None, cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args[:3]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def build_wheel(work: Path) -> Path:
    """The wheel of a copy of this tree's sources (a build never writes into the checkout)."""
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    dist = work / "dist"
    if UV:
        run([UV, "build", "--wheel", "--out-dir", str(dist), str(source)], cwd=work)
    else:
        run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(source)], cwd=work)
    (wheel,) = dist.glob("ragdown-*.whl")
    return wheel


def fresh_venv(work: Path, wheel: Path) -> Path:
    venv = work / "venv"
    if UV:
        run([UV, "venv", "-q", "--python", sys.executable, str(venv)], cwd=work)
        run([UV, "pip", "install", "-q", "--python", str(venv / "bin/python"), str(wheel)], cwd=work)
    else:
        run([sys.executable, "-m", "venv", str(venv)], cwd=work)
        run([str(venv / "bin/python"), "-m", "pip", "install", "-q", str(wheel)], cwd=work)
    return venv / "bin"


@pytest.mark.slow
def test_the_wheel_installs_and_serves_on_its_own(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    bin_dir = fresh_venv(work, build_wheel(work))
    # Nothing of this checkout on the path: the installed package alone.
    env = isolated_env(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "config"))
    env.pop("PYTHONPATH", None)

    assert run([str(bin_dir / "ragdown"), "--version"], env=env, cwd=work).strip() == f"ragdown {__version__}"
    where = run([str(bin_dir / "python"), "-c", "import ragdown; print(ragdown.__file__)"], env=env, cwd=work)
    package = Path(where.strip()).parent
    assert package.is_relative_to(bin_dir.parent)
    assert (package / "web/index.html").is_file()
    assert (package / "py.typed").is_file()

    docs = tmp_path / "docs"
    write(docs, "work/a.md", "# Alpha\n\nFrom the wheel.\n")
    key, _ = KeyStore(docs).create("wheel", ["work"], "write")
    port = free_port()
    serve_env = {
        **env,
        "RAGDOWN_DOCS_DIR": str(docs),
        "RAGDOWN_DATA_DIR": str(tmp_path / "data"),
        "RAGDOWN_TOKEN": TOKEN,
        "RAGDOWN_HOST": "127.0.0.1",
        "PORT": str(port),
    }
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [str(bin_dir / "ragdown"), "serve"], cwd=work, env=serve_env, stdout=out, stderr=out
        )
    try:
        url = f"http://127.0.0.1:{port}"
        status = _wait_for(url, server, log)
        assert status["version"] == __version__
        assert "<html" in httpx.get(f"{url}/", timeout=10).text.lower()  # the web UI, from the package

        client = [str(bin_dir / "ragdown")]
        login = run([*client, "login", "--url", url, "--key", key], env=env, cwd=work)
        assert login.startswith(f"logged in to {url} as key:wheel (write): work")
        assert run([*client, "whoami"], env=env, cwd=work).strip() == f"key:wheel (write): work on {url}"
        listed = json.loads(run([*client, "ls", "work", "--json"], env=env, cwd=work))
        assert [f["name"] for f in listed["files"]] == ["a.md"]
    finally:
        server.terminate()
        server.wait(10)


def _wait_for(url: str, server: subprocess.Popen[bytes], log: Path) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while True:
        if server.poll() is not None:
            pytest.fail(f"the installed ragdown serve exited: {log.read_text()[-3000:]}")
        try:
            headers = {"Authorization": f"Bearer {TOKEN}"}  # without it, /api/status says only liveness
            body: dict[str, object] = httpx.get(f"{url}/api/status", headers=headers, timeout=2).json()
            if body.get("ready") and body.get("last_sync"):
                return body
        except (httpx.TransportError, ValueError):
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"the installed ragdown serve never got ready: {log.read_text()[-3000:]}")
        time.sleep(0.1)
