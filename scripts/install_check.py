"""The one-line installs, end to end (run by `scripts/install-check`, and by `.ci/run` after `make test`):

1. the wheel built from this tree runs through `uvx --from WHEEL[offline] ragdown --version`;
2. `uv tool install WHEEL` (into a temporary UV_TOOL_DIR / UV_TOOL_BIN_DIR) gives a `ragdown` whose
   `ragdown stdio` answers a real MCP session through the SDK's stdio client (search, then a write), and
   whose `ragdown serve` serves the web UI's files from the package while its client logs in and lists;
3. the Claude Desktop bundle (packaging/mcpb/): `mcpb validate` and `mcpb pack`, then `mcpb unpack` and
   its server started the way its manifest says (`uv run --directory <bundle> server/main.py`, ragdown
   found in the wheel's folder through UV_FIND_LINKS until it is on PyPI), answering an MCP session;
4. the Claude Code plugin (.claude-plugin/plugin.json): `claude plugin validate`.

3 and 4 fetch their npm tools with npx (into npm's cache) and are skipped, saying so, without npx. uv comes
from the checkout's .venv (`make install` puts it there) or PATH. The package index must be reachable (uv's
cache makes later runs fast)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CLAUDE_CODE = "@anthropic-ai/claude-code@2"
MCPB = "@anthropic-ai/mcpb@2"


def say(text: str) -> None:
    print(f"install-check: {text}", file=sys.stderr, flush=True)


def run(
    args: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 600
) -> str:
    done = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(
            f"install-check: FAILED: {' '.join(args[:5])} ({done.returncode}):\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done.stdout


def check(condition: bool, text: str) -> None:
    if not condition:
        raise SystemExit(f"install-check: FAILED: {text}")
    say(f"ok: {text}")


def build_wheel(work: Path, uv: str) -> Path:
    """The wheel of a copy of this tree's sources (a build never writes into the checkout)."""
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    dist = work / "dist"
    run([uv, "build", "--wheel", "--out-dir", str(dist), str(source)])
    (wheel,) = dist.glob("ragdown-*.whl")
    return wheel


async def mcp_session(command: str, args: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
    async with Client(params, read_timeout_seconds=300) as client:
        info = client.server_info
        check(
            info is not None and info.name.startswith("ragdown"),
            f"{Path(command).name} {' '.join(args[-2:])}: MCP initialize answers ({info})",
        )
        found = await client.call_tool("ragdown_recall", {"query": "how do we rotate the backup keys"})
        text = " ".join(getattr(c, "text", "") for c in found.content)
        check(not found.is_error and "backups.md" in text, "ragdown_recall finds backups.md")
        wrote = await client.call_tool("ragdown_write", {"path": "from-mcp.md", "text": "# From MCP\n"})
        check(not wrote.is_error, "ragdown_write succeeds")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve_and_client(installed: Path, env: dict[str, str], work: Path) -> None:
    """The installed `ragdown serve`: the web UI's files from the package (the vendored libraries too, with
    their types), and the installed client logging in with a key and listing the folder."""
    import httpx

    docs = notes(work, "served")
    (docs / "work").mkdir()
    (docs / "work/a.md").write_text("# Alpha\n\nFrom the wheel.\n")
    from ragdown.access.keys import KeyStore

    key, _ = KeyStore(docs).create("wheel", ["work"], "write")
    token = "install-check-token-0123456789"
    port = free_port()
    serve_env = {
        **server_env(env, work, docs),
        "RAGDOWN_TOKEN": token,
        "RAGDOWN_HOST": "127.0.0.1",
        "PORT": str(port),
    }
    log = work / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen([str(installed), "serve"], env=serve_env, cwd=work, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if server.poll() is not None:
                raise SystemExit(
                    f"install-check: FAILED: the installed ragdown serve exited:\n{log.read_text()[-3000:]}"
                )
            try:
                status = httpx.get(
                    f"{url}/api/status", headers={"Authorization": f"Bearer {token}"}, timeout=2
                )
                if status.json().get("ready") and status.json().get("last_sync"):
                    break
            except (httpx.TransportError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise SystemExit(
                    f"install-check: FAILED: ragdown serve never got ready:\n{log.read_text()[-3000:]}"
                )
            time.sleep(0.2)
        check("<html" in httpx.get(f"{url}/", timeout=10).text.lower(), "ragdown serve serves the web UI")
        vendor = httpx.get(f"{url}/vendor/codemirror.js", timeout=10)
        check(
            vendor.status_code == 200 and "javascript" in vendor.headers.get("content-type", ""),
            "the vendored editor is in the wheel and served as JavaScript",
        )
        client_env = {**env, "XDG_CONFIG_HOME": str(work / "client-config")}
        login = run([str(installed), "login", "--url", url, "--key", key], env=client_env)
        check(login.startswith(f"logged in to {url} as key:wheel (write): work"), "the client logs in")
        listed = json.loads(run([str(installed), "ls", "work", "--json"], env=client_env))
        check([f["name"] for f in listed["files"]] == ["a.md"], "the client lists the folder")
    finally:
        server.terminate()
        server.wait(10)


def notes(work: Path, name: str) -> Path:
    folder = work / name
    folder.mkdir()
    (folder / "backups.md").write_text("# Backups\n\n## Rotating the backup keys\n\nEvery quarter.\n")
    return folder


def server_env(base: dict[str, str], work: Path, docs: Path) -> dict[str, str]:
    return {
        **base,
        "RAGDOWN_DOCS_DIR": str(docs),
        "RAGDOWN_DATA_DIR": str(work / f"data-{docs.name}"),
        "RAGDOWN_EMBEDDER": "hash",  # the route is under test, not the model (the image bakes one)
        "RAGDOWN_LOG_LEVEL": "WARNING",
    }


def substitute(value: str, values: dict[str, str]) -> str:
    for key, replacement in values.items():
        value = value.replace("${" + key + "}", replacement)
    return value


def main() -> int:
    uv = shutil.which("uv", path=str(REPO / ".venv/bin")) or shutil.which("uv")
    if uv is None:
        say("uv is not installed (make install puts it in .venv)")
        return 2
    npx = shutil.which("npx")
    with tempfile.TemporaryDirectory(prefix="ragdown-install-check-") as tmp:
        work = Path(tmp)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("RAGDOWN_", "VIRTUAL_ENV", "UV_"))}
        base["PATH"] = f"{Path(uv).parent}{os.pathsep}{base.get('PATH', '')}"
        base["XDG_CONFIG_HOME"] = str(work / "config")
        started = time.monotonic()
        wheel = build_wheel(work, uv)
        say(f"built {wheel.name} in {time.monotonic() - started:.1f} s")

        tools = {**base, "UV_TOOL_DIR": str(work / "uv-tools"), "UV_TOOL_BIN_DIR": str(work / "uv-bin")}
        started = time.monotonic()
        version = run([uv, "tool", "run", "--from", f"{wheel}[offline]", "ragdown", "--version"], env=tools)
        from ragdown import __version__

        check(
            version.strip() == f"ragdown {__version__}",
            f"uvx --from {wheel.name}[offline] ragdown --version: {version.strip()} "
            f"({time.monotonic() - started:.1f} s)",
        )
        run([uv, "tool", "install", str(wheel)], env=tools)
        installed = work / "uv-bin/ragdown"
        check(installed.is_file(), "uv tool install puts ragdown in UV_TOOL_BIN_DIR")
        docs = notes(work, "uv-notes")
        asyncio.run(mcp_session(str(installed), ["stdio"], server_env(base, work, docs)))
        check((docs / "from-mcp.md").is_file(), "the write is on disk")
        serve_and_client(installed, base, work)

        if npx is None:
            say("npx not found: the .mcpb bundle and the Claude Code plugin are not checked")
            return 0
        npm_env = {
            **base,
            "HOME": str(work / "home"),
            "NPM_CONFIG_CACHE": os.environ.get("NPM_CONFIG_CACHE", str(Path.home() / ".npm")),
        }
        (work / "home").mkdir()
        bundle_dir = REPO / "packaging/mcpb"
        out = run([npx, "-y", MCPB, "validate", str(bundle_dir / "manifest.json")], env=npm_env)
        check("passes" in out, "mcpb validate packaging/mcpb/manifest.json")
        bundle = work / "ragdown.mcpb"
        run([npx, "-y", MCPB, "pack", str(bundle_dir), str(bundle)], env=npm_env)
        check(bundle.is_file(), f"mcpb pack: {bundle.stat().st_size:,} bytes")
        unpacked = work / "unpacked"
        run([npx, "-y", MCPB, "unpack", str(bundle), str(unpacked)], env=npm_env)
        manifest: dict[str, Any] = json.loads((unpacked / "manifest.json").read_text())
        config = manifest["server"]["mcp_config"]
        docs = notes(work, "desktop-notes")
        values = {
            "__dirname": str(unpacked),
            "user_config.notes_dir": str(docs),
            "user_config.read_only": "false",
        }
        env = {**server_env(base, work, docs), **{k: substitute(v, values) for k, v in config["env"].items()}}
        env["UV_FIND_LINKS"] = str(wheel.parent)  # ragdown is not on PyPI yet
        env["UV_PROJECT_ENVIRONMENT"] = str(work / "bundle-venv")
        asyncio.run(mcp_session(config["command"], [substitute(a, values) for a in config["args"]], env))
        check((docs / "from-mcp.md").is_file(), "the bundle's write is on disk")

        out = run([npx, "-y", CLAUDE_CODE, "plugin", "validate", str(REPO)], env=npm_env)
        check("Validation passed" in out, "claude plugin validate .claude-plugin/plugin.json")
    say("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
