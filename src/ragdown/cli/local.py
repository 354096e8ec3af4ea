"""The engine a one-shot CLI command works with (`ragdown index`, `search`, `outline`, `tree`, `retrieve`, …)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragdown.core.config import Settings
    from ragdown.engine.engine import Engine


def open_engine(
    settings: Settings, directory: Path, ignore: Sequence[str] = (), setext: bool | None = None
) -> Engine:
    """An engine on `directory` for one CLI command: its index opened (the primary's, or a reader of it when
    another process serves the folder), nothing synced or watched yet."""
    from ragdown.core.config import ConfigError
    from ragdown.engine.engine import Engine
    from ragdown.engine.setext import with_setext
    from ragdown.tools.cli_answers import answer

    if not directory.is_dir():
        raise ConfigError(f"not a directory: {directory}")
    engine = Engine(
        with_setext(settings.with_docs_dir(directory), directory.resolve(), "stdio", setext),
        "stdio",
        docs_dir=directory,
        ignore=tuple(ignore),
        cli_answer=answer,
    )
    engine.start(background=False, initial_sync=False, watch=False)
    if engine.error:
        raise SystemExit(f"ragdown: {engine.error}")
    if ignore and engine.role == "reader":  # the running primary syncs with its own rules, not these
        engine.close()
        raise ConfigError(
            f"--ignore applies only when this command indexes {directory} itself, and a running ragdown "
            "indexes it now: add the patterns to the folder's .ragdownignore instead (that process follows "
            "it at once), or stop that process first"
        )
    return engine
