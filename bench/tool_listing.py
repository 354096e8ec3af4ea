"""The characters each tool set's listing costs an agent on every turn: `tools/list` as the MCP client
receives it (names, descriptions and input schemas, as JSON), per set of `RAGDOWN_TOOLSET`.

    .venv/bin/python bench/tool_listing.py [SET ...]   # default: ragdown, extra, ragdown,extra, chatgpt
"""

from __future__ import annotations

import ragdown  # noqa: F401  first, as in every ragdown process

# isort: split
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

from mcp import Client

from ragdown.core.config import Settings
from ragdown.mcpserver.server import prepare_stdio


async def listing(toolset: str, docs: Path, data: Path) -> tuple[int, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
    env.update(
        RAGDOWN_DOCS_DIR=str(docs),
        RAGDOWN_DATA_DIR=str(data),
        RAGDOWN_EMBEDDER="hash",
        RAGDOWN_WATCH="false",
        RAGDOWN_TOOLSET=toolset,
    )
    served = prepare_stdio(Settings.from_env(env))
    try:
        async with Client(served.server, mode="legacy") as client:
            tools = (await client.list_tools()).tools
            dumped = [t.model_dump(mode="json", exclude_none=True) for t in tools]
            return len(tools), len(json.dumps(dumped, ensure_ascii=False, separators=(",", ":")))
    finally:
        served.close()


async def main(sets: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        (docs / "a.md").write_text("# A\n", encoding="utf-8")
        for n, toolset in enumerate(sets):
            count, chars = await listing(toolset, docs, Path(tmp) / f"data{n}")
            print(f"{toolset:20s} {count:3d} tools  {chars:7,d} characters")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or ["ragdown", "extra", "ragdown,extra", "chatgpt"]))
