"""Whether a run reads setext headings: the explicit choice (`--setext` / `--no-setext`), else
`RAGDOWN_SETEXT`, else what the index was built with, else on (CommonMark).

The choice is stored in the index (`IndexMeta.setext`) and changing it rebuilds the index; reading the stored
value back means a later run without the flag keeps the library as it was built (`ragdown index --no-setext
DIR`, then `ragdown index DIR` or `ragdown mcp DIR`), as MarkIndex's runs do, instead of rebuilding it with
setext on."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ragdown.core.config import Mode, Settings
from ragdown.storage.location import open_backend
from ragdown.storage.records import StoreError
from ragdown.storage.sqlite.store import DB_NAME


def stored_setext(settings: Settings, root: Path, mode: Mode) -> bool | None:
    """What the index of `root` was built with; None when there is no index yet (nothing is created)."""
    data_dir = settings.data_dir_override or settings.with_docs_dir(root).data_dir(mode)
    if not settings.database_url and not (data_dir / DB_NAME).is_file():
        return None
    backend = open_backend(settings, root, data_dir, mode)
    try:
        store = backend.open_store(writable=False)
        try:
            meta = store.read_meta()
        finally:
            store.close()
    except StoreError:
        return None
    finally:
        backend.close()
    if not meta:
        return None
    return meta.get("setext", "true") != "false"


def with_setext(settings: Settings, root: Path, mode: Mode, explicit: bool | None = None) -> Settings:
    """`settings` with the setext choice of this run: `explicit` > `RAGDOWN_SETEXT` > stored > default."""
    if explicit is not None:
        return replace(settings, setext=explicit)
    if "setext" in settings.env_set:
        return settings
    stored = stored_setext(settings, root, mode)
    return settings if stored is None else replace(settings, setext=stored)
