"""Third-party MCP clients from npm, for the tests that drive ragdown with them: each package is fetched once
through npx (into npm's own cache, where a later run finds it) and its command then run directly, without
npx resolving the version again on every call. The major versions are pinned (the Inspector's CLI flags
changed between 1 and 2)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

NPX = shutil.which("npx")
INSPECTOR = ("@modelcontextprotocol/inspector@2", "mcp-inspector")
CLAUDE_CODE = ("@anthropic-ai/claude-code@2", "claude")
FIRST_RUN_TIMEOUT_S = 600  # npx downloads a package on its first use on a machine


def npx_env() -> dict[str, str]:
    """npx's own environment: the user's (npm cache, PATH), without any RAGDOWN_* setting of theirs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
    env.update({"NO_UPDATE_NOTIFIER": "1", "npm_config_update_notifier": "false", "npm_config_yes": "true"})
    return env


def npm_command(client: tuple[str, str]) -> Path:
    """The command of `client` (package, command name), fetched through npx when npm's cache lacks it."""
    assert NPX is not None
    package, name = client
    done = subprocess.run(
        [NPX, "-y", "-p", package, "-c", f"command -v {name}"],
        capture_output=True,
        text=True,
        timeout=FIRST_RUN_TIMEOUT_S,
        env=npx_env(),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"npx could not fetch {package}: {done.stderr[-2000:]}"
    command = Path(done.stdout.strip().splitlines()[-1])
    assert command.is_file(), f"npx named no {name} command for {package}: {done.stdout[-2000:]}"
    return command
