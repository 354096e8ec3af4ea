"""Each command imports only what it uses: `--version` nothing of the index, `index` and `search` nothing of
MCP or of ONNX Runtime with the `hash` embedder, `stdio` nothing of ragdown's HTTP face and only the tool set
it offers. Checked on real processes by the modules they end with (never by a clock)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, isolated_env, write

# Runs `ragdown ARGS` in this process's interpreter and writes the names of every module loaded to OUT.
RUNNER = """
import json, sys
out = sys.argv.pop(1)
from ragdown.cli.main import main
try:
    code = main(sys.argv[1:])
finally:
    with open(out, "w", encoding="utf-8") as f:
        json.dump(sorted(sys.modules), f)
sys.exit(code)
"""

# Builds `ragdown stdio`'s server for RAGDOWN_DOCS_DIR (as `run_stdio` does, without a transport), waits
# until its engine is ready and has synced, and writes the modules loaded to OUT.
STDIO = """
import json, sys
from ragdown.core.config import Settings
from ragdown.mcpserver.server import prepare_stdio
served = prepare_stdio(Settings.from_env())
served.engine.wait_ready(60)
served.engine.sync()
served.close()
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(sorted(sys.modules), f)
"""

MCP = {"mcp", "mcp_types", "pydantic", "starlette", "uvicorn", "anyio", "httpx"}
MODEL = {"onnxruntime", "tokenizers"}


def run_cli(
    env: dict[str, str], tmp_path: Path, *args: str, check: bool = True
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`ragdown ARGS` as a real process; its result and the modules it had loaded when it ended."""
    out = tmp_path / "modules.json"
    out.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(out), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done, set(json.loads(out.read_text(encoding="utf-8")))


def packages(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("imports")
    docs = tmp / "docs"
    write(
        docs,
        "ops/backups.md",
        "---\ntags: [ops]\n---\n# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun it twice.",
    )
    write(docs, "notes/today.md", "# Today\n\nA [[backups]] note with `code`.\n")
    return docs, isolated_env(tmp)


def test_version_loads_nothing_of_the_index(folder: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    _, env = folder
    done, modules = run_cli(env, tmp_path, "--version", check=False)
    assert done.returncode == 0
    assert done.stdout.startswith("ragdown ")
    assert (
        packages(modules) & (MCP | MODEL | {"numpy", "sqlite3", "markdown_it", "yaml", "pathspec"}) == set()
    )
    assert not {
        m
        for m in modules
        if m.startswith(
            (
                "ragdown.storage",
                "ragdown.sync",
                "ragdown.embedders",
                "ragdown.engine",
                "ragdown.search.hybrid",
            )
        )
    }


def test_index_and_search_with_hash_load_neither_mcp_nor_onnx(
    folder: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    docs, env = folder
    done, modules = run_cli(env, tmp_path, "index", str(docs))
    assert done.stdout.startswith("2 added")
    assert packages(modules) & (MCP | MODEL | {"watchfiles", "asyncio"}) == set()
    assert {"markdown_it", "yaml"} <= packages(modules)  # a first index parses

    done, modules = run_cli(env, tmp_path, "search", str(docs), "restore twice", "--top-k", "1")
    assert done.stdout.startswith("ops/backups.md:")
    # Nothing changed on disk, so nothing is parsed: no Markdown parser, no YAML either.
    assert (
        packages(modules) & (MCP | MODEL | {"watchfiles", "asyncio", "markdown_it", "yaml", "rich"}) == set()
    )
    assert "ragdown.engine.engine" in modules  # no server runs: the CLI opened the index itself


# What a search on an unchanged folder never uses: the ignore rules' matcher without rules, the installed
# packages' metadata, the parser and the history (nothing is parsed or recorded), the evaluation, the local
# models' modules (`hash`), the evidence and link following (rrf, no links followed) and the other commands.
NOT_SEARCHED = (
    "ragdown.cli.keys",
    "ragdown.cli.llm",
    "ragdown.documents.parse",
    "ragdown.embedders.catalog",
    "ragdown.embedders.gather_first",
    "ragdown.embedders.multilingual",
    "ragdown.embedders.onnx",
    "ragdown.embedders.quantize",
    "ragdown.evaluation",
    "ragdown.history",
    "ragdown.search.evidence",
    "ragdown.search.hook",
    "ragdown.search.linking",
    "ragdown.search.outline",
    "ragdown.writes",
)


def test_search_on_an_unchanged_folder_loads_only_what_it_reads(
    folder: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    docs, env = folder
    run_cli(env, tmp_path, "index", str(docs))
    done, modules = run_cli(env, tmp_path, "search", str(docs), "nightly snapshots", "--top-k", "1")
    assert done.stdout.startswith("ops/backups.md:")
    assert packages(modules) & {"pathspec", "typing_extensions", "email", "zipfile"} == set()
    assert "importlib.metadata" not in modules
    assert sorted(m for m in modules if m.startswith(NOT_SEARCHED)) == []


def test_a_folder_with_ignore_rules_loads_their_matcher(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "keep.md", "# Keep\n\nKept text.\n")
    write(docs, "drafts/skip.md", "# Skip\n\nLeft out.\n")
    write(docs, ".ragdownignore", "drafts/\n")
    env = isolated_env(tmp_path)
    done, modules = run_cli(env, tmp_path, "index", str(docs))
    assert done.stdout.startswith("1 added")
    assert "pathspec" in packages(modules)
    done, modules = run_cli(env, tmp_path, "search", str(docs), "left out", "--json")
    assert "drafts/skip.md" not in done.stdout
    assert "pathspec" in packages(modules)


def test_stdio_loads_no_http_face_no_model_runtime_and_only_its_tool_set(
    folder: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    docs, env = folder
    out = tmp_path / "stdio.json"
    subprocess.run(
        [sys.executable, "-c", STDIO, str(out)],
        cwd=REPO,
        env={**env, "RAGDOWN_DOCS_DIR": str(docs)},
        check=True,
        timeout=120,
    )
    modules = set(json.loads(out.read_text(encoding="utf-8")))
    assert "ragdown.mcpserver.server" in modules
    # `import mcp` itself loads starlette and uvicorn (the SDK's package __init__); ragdown adds no HTTP face.
    assert not {m for m in modules if m.startswith("ragdown.http")}
    assert packages(modules) & MODEL == set()
    other_sets = {"ragdown.toolsets.markindex", "ragdown.toolsets.readmedb", "ragdown.toolsets.hallouminate"}
    assert modules & other_sets == set()
