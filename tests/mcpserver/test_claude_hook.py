"""The Claude Code hooks of the README ("Claude Code setup"), against a real `ragdown stdio` process.

Claude Code's `mcp_tool` hooks call `ragdown_context` on the server added with `claude mcp add ragdown`,
with the hook's `input` after substituting `${prompt}` and `${session_id}`. The settings below are the
README's, verbatim; the test sends exactly what they make Claude Code send.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write
from tests.mcpserver.conftest import Connect, Session

pytestmark = pytest.mark.anyio

CLAUDE_SETTINGS = """
{
  "hooks": {
    "UserPromptSubmit": [
      { "hooks": [ { "type": "mcp_tool", "server": "ragdown", "tool": "ragdown_context",
          "input": { "prompt": "${prompt}", "session_id": "claude:${session_id}", "format": "claude-code" } } ] }
    ],
    "SessionStart": [
      { "matcher": "compact", "hooks": [ { "type": "mcp_tool", "server": "ragdown", "tool": "ragdown_context",
          "input": { "prompt": "", "session_id": "claude:${session_id}", "reset": true } } ] }
    ]
  }
}
"""
# Claude Code drops a hook's output past this many characters.
CLAUDE_HOOK_OUTPUT_LIMIT = 10_000
PROMPT = "How do I restore the database backups?"
SESSION = "5f0c2a9e-8d1b-4c3e-9f7a-2b6d4e8a1c0f"


def hook(event: str) -> dict[str, Any]:
    entries = json.loads(CLAUDE_SETTINGS)["hooks"][event]
    assert len(entries) == 1
    (spec,) = entries[0]["hooks"]
    assert (spec["type"], spec["server"], spec["tool"]) == ("mcp_tool", "ragdown", "ragdown_context")
    return dict(spec["input"])


def substitute(value: Any, prompt: str, session_id: str) -> Any:
    if isinstance(value, str):
        return value.replace("${prompt}", prompt).replace("${session_id}", session_id)
    return value


async def fire(s: Session, event: str, prompt: str = "", session_id: str = SESSION) -> str:
    """Call the tool as Claude Code's hook for `event` does, and return its text (never an error)."""
    args = {k: substitute(v, prompt, session_id) for k, v in hook(event).items()}
    return await s.ok("ragdown_context", **args)


def additional_context(raw: str) -> str:
    payload = json.loads(raw)
    assert payload == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": payload["hookSpecificOutput"]["additionalContext"],
        }
    }
    block: str = payload["hookSpecificOutput"]["additionalContext"]
    return block


@pytest.fixture
def docs(docs: Path) -> Path:
    write(docs, "ops/backups.md", "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.")
    write(docs, "misc/lunch.md", "# Lunch\n\nThe canteen opens at noon.")
    return docs


async def test_the_server_answers_to_the_name_the_hooks_use(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        assert s.client.server_info is not None
        # `server` in both hooks is "ragdown" (checked by `hook`), the name `claude mcp add` gave it.
        assert s.client.server_info.name == "ragdown"
        hook("UserPromptSubmit")
        hook("SessionStart")
        assert "ragdown_context" in await s.tool_names()


async def test_user_prompt_submit_gets_additional_context_once_until_compaction(
    docs: Path, connect: Connect
) -> None:
    async with connect(docs) as s:
        raw = await fire(s, "UserPromptSubmit", PROMPT)
        block = additional_context(raw)
        assert block.startswith(f'<ragdown-context source="{docs.resolve()}">\n')
        assert block.endswith("\n</ragdown-context>")
        assert "[1] ops/backups.md:7-7 — Backups › Restore (similarity " in block
        assert "Run pg_restore twice." in block
        assert len(raw) <= CLAUDE_HOOK_OUTPUT_LIMIT

        # The next identical prompt of the same conversation adds nothing: Claude already has it.
        assert await fire(s, "UserPromptSubmit", PROMPT) == ""
        # Another conversation is another session.
        other = await fire(s, "UserPromptSubmit", PROMPT, session_id="another-session")
        assert additional_context(other) == block

        # Compaction drops what Claude was given: the SessionStart hook forgets it, and answers nothing.
        assert await fire(s, "SessionStart") == ""
        again = await fire(s, "UserPromptSubmit", PROMPT)
        assert additional_context(again) == block
        assert await fire(s, "UserPromptSubmit", PROMPT) == ""
        # The reset touched only its own session.
        assert await fire(s, "UserPromptSubmit", PROMPT, session_id="another-session") == ""


async def test_prompts_with_nothing_to_add_get_empty_text_not_json(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        assert await fire(s, "UserPromptSubmit", "ok") == ""
        assert await fire(s, "UserPromptSubmit", "/compact keep the backup notes") == ""
        assert await fire(s, "UserPromptSubmit", "   ") == ""
        # Without a session id (a hook configured without one) the section is sent every time.
        args = {**hook("UserPromptSubmit"), "prompt": PROMPT}
        del args["session_id"]
        first = await s.ok("ragdown_context", **args)
        assert additional_context(first)
        assert await s.ok("ragdown_context", **args) == first


async def test_the_hook_output_stays_under_claude_codes_cap(docs: Path, connect: Connect) -> None:
    paragraph = "Restore the database backups with pg_restore, then check the row counts. " * 20
    for i in range(12):
        write(docs, f"runbooks/restore-{i}.md", f"# Restore {i}\n\n## Database backups\n\n{paragraph}\n")
    async with connect(docs) as s:
        raw = await fire(s, "UserPromptSubmit", PROMPT)
        block = additional_context(raw)
        assert block.count("(similarity ") >= 2
        assert len(raw) <= CLAUDE_HOOK_OUTPUT_LIMIT
