"""Server-wide state shared by every endpoint: effective settings, hook memory, the engine.

Settings resolve per key, first set wins: saved server settings (`.ragdown-server.json`, serve only) over
the `RAGDOWN_*` variables over the defaults. A tool call's arguments and a folder's `.ragdown.json` `hook`
sit above both for `ragdown_context` (see `hook_settings`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from ragdown.core.config import Settings, setting_default
from ragdown.embedders import (
    default_keep_top,
    default_min_ratio,
    default_min_score,
    unrelated_score,
)
from ragdown.engine.engine import Engine
from ragdown.search.hybrid import Fusion, SearchOptions, fusion_for
from ragdown.storage.backend import QueryLogStore, SessionMemory
from ragdown.vault.folders import HookOverrides

if TYPE_CHECKING:  # imported where used: the CLI's search asks only for `search_options`
    from ragdown.search.hook import HookSettings

Source = Literal["saved", "env", "default", "offline"]


class Runtime:
    def __init__(self, settings: Settings, engine: Engine, saved: dict[str, Any] | None = None) -> None:
        self.settings = settings
        self.engine = engine
        self.saved: dict[str, Any] = dict(saved or {})
        # In the process and the data dir with SQLite; in the database, shared by every replica, with PostgreSQL.
        self.memory: SessionMemory = engine.backend.hook_memory()
        self.query_log: QueryLogStore = engine.backend.query_log()

    def value(self, key: str) -> Any:
        """A server setting (`config.SERVER_KEYS`) in effect: saved from the web UI, else its variable."""
        saved = self.saved.get(key)
        return saved if saved is not None else getattr(self.settings, key)

    def source(self, key: str) -> Source:
        """Where a server setting in effect comes from: `saved` from the web UI, its variable (`env`), the
        `default`, or, for the embedder, `offline`: the default could not load and the offline model stands in."""
        if self.saved.get(key) is not None:
            return "saved"
        if key == "embedder" and self.engine.embedder_notice is not None:
            return "offline"
        return "env" if key in self.settings.env_set else "default"

    def shown_value(self, key: str) -> Any:
        """`value`, but the embedder in use where the offline model stands in for the default."""
        if self.source(key) == "offline" and self.engine.embedder is not None:
            return self.engine.embedder.name
        return self.value(key)

    @property
    def text_limit(self) -> int:
        return int(self.value("text_limit"))

    @property
    def max_per_document(self) -> int:
        return int(self.value("max_per_document"))

    @property
    def follow_links(self) -> int:
        return int(self.value("follow_links"))

    @property
    def fusion(self) -> Fusion:
        """`RAGDOWN_FUSION`, else the fusion the embedder in use was measured best with."""
        return fusion_for(self.settings.fusion, self.embedder_name())

    def search_options(self, top_k: int) -> SearchOptions:
        """Search options in effect for a caller asking for `top_k` hits."""
        return SearchOptions(
            top_k=top_k,
            max_per_document=self.max_per_document,
            follow_links=self.follow_links,
            fusion=self.fusion,
        )

    @property
    def query_log_enabled(self) -> bool:
        return bool(self.value("query_log"))

    @property
    def watch(self) -> bool:
        return bool(self.value("watch"))

    @property
    def root_mcp(self) -> bool:
        return bool(self.value("root_mcp"))

    def log(self, kind: str, **fields: Any) -> None:
        """One line in the query log, when it is on."""
        if self.query_log_enabled:
            self.query_log.record(kind, **fields)

    @property
    def embedder_spec(self) -> str:
        return str(self.value("embedder"))

    def embedder_name(self) -> str:
        emb = self.engine.embedder
        return emb.name if emb is not None else self.embedder_spec

    def server_hook(self) -> dict[str, Any]:
        """The hook defaults below a folder's own: saved server settings over the variables, over defaults."""
        saved = self.saved.get("hook") or {}
        env = self.settings.hook
        emb = self.engine.embedder
        min_score = default_min_score(self.embedder_spec) if emb is None else emb.min_score

        def pick(key: str, env_value: Any, default: Any) -> Any:
            if isinstance(saved, dict) and saved.get(key) is not None:
                return saved[key]
            return env_value if env_value is not None else default

        return {
            "top_k": pick("top_k", env.top_k, setting_default("hook.top_k")),
            "min_score": pick("min_score", env.min_score, min_score),
            "min_ratio": pick("min_ratio", env.min_ratio, default_min_ratio(self.embedder_name())),
            "max_chars": pick("max_chars", env.max_chars, setting_default("hook.max_chars")),
        }

    def unrelated_score(self) -> float | None:
        emb = self.engine.embedder
        return emb.unrelated_score if emb is not None else unrelated_score(self.embedder_spec)

    def hook_settings(self, call: dict[str, Any], folder: HookOverrides | None) -> HookSettings:
        """Per key: the call's argument, the folder's `hook`, the server's saved value, the variable, default."""
        from ragdown.search.hook import HookSettings

        server = self.server_hook()
        own = folder.as_dict() if folder is not None else {}
        merged = {k: call[k] if call.get(k) is not None else own.get(k, server[k]) for k in server}
        saved = self.saved.get("hook") or {}
        ratio_set = (
            call.get("min_ratio") is not None
            or own.get("min_ratio") is not None
            or (isinstance(saved, dict) and saved.get("min_ratio") is not None)
            or self.settings.hook.min_ratio is not None
        )
        return HookSettings(
            top_k=int(merged["top_k"]),
            min_score=float(merged["min_score"]),
            min_ratio=float(merged["min_ratio"]),
            max_chars=int(merged["max_chars"]),
            keep_top=0 if ratio_set else default_keep_top(self.embedder_name()),
        )
