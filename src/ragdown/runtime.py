"""Server-wide state shared by every endpoint: effective settings, hook memory, the engine.

Settings resolve per key, first set wins: saved server settings (`.ragdown-server.json`, serve only) over
the `RAGDOWN_*` variables over the defaults. A tool call's arguments and a folder's `.ragdown.json` `hook`
sit above both for `ragdown_context` (see `hook_settings`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ragdown.config import Settings
from ragdown.engine import Engine
from ragdown.folders import HookOverrides
from ragdown.index.embedders import default_fusion, default_min_score, unrelated_score
from ragdown.querylog import QueryLog
from ragdown.search.hybrid import Fusion, SearchOptions, as_fusion

HOOK_DEFAULT_TOP_K = 4
HOOK_DEFAULT_MIN_RATIO = 0.95  # of the best hit's cosine
HOOK_DEFAULT_MAX_CHARS = 6000
HOOK_SESSIONS = 200


@dataclass(frozen=True)
class HookSettings:
    top_k: int
    min_score: float
    min_ratio: float
    max_chars: int


class HookMemory:
    """The chunks each (scope, session) was given, for the last 200 sessions."""

    def __init__(self, capacity: int = HOOK_SESSIONS) -> None:
        self._capacity = capacity
        self._sessions: OrderedDict[str, set[str]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(scope_dir: str, session_id: str) -> str:
        return f"{scope_dir}\x00{session_id}"

    def seen(self, key: str) -> set[str]:
        with self._lock:
            seen = self._sessions.get(key)
            if seen is None:
                return set()
            self._sessions.move_to_end(key)
            return set(seen)

    def add(self, key: str, chunk_keys: list[str]) -> None:
        with self._lock:
            seen = self._sessions.setdefault(key, set())
            seen.update(chunk_keys)
            self._sessions.move_to_end(key)
            while len(self._sessions) > self._capacity:
                self._sessions.popitem(last=False)

    def reset(self, key: str) -> None:
        with self._lock:
            self._sessions.pop(key, None)


class Runtime:
    def __init__(self, settings: Settings, engine: Engine, saved: dict[str, Any] | None = None) -> None:
        self.settings = settings
        self.engine = engine
        self.saved: dict[str, Any] = dict(saved or {})
        self.memory = HookMemory()
        self.query_log = QueryLog(engine.data_dir)

    def _value(self, key: str, env_value: Any) -> Any:
        saved = self.saved.get(key)
        return saved if saved is not None else env_value

    @property
    def text_limit(self) -> int:
        return int(self._value("text_limit", self.settings.text_limit))

    @property
    def max_per_document(self) -> int:
        return int(self._value("max_per_document", self.settings.max_per_document))

    @property
    def follow_links(self) -> int:
        return int(self._value("follow_links", self.settings.follow_links))

    @property
    def fusion(self) -> Fusion:
        """`RAGDOWN_FUSION`, else the fusion the embedder in use was measured best with."""
        return as_fusion(self.settings.fusion or default_fusion(self.embedder_name()))

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
        return bool(self._value("query_log", self.settings.query_log))

    @property
    def watch(self) -> bool:
        return bool(self._value("watch", self.settings.watch))

    @property
    def root_mcp(self) -> bool:
        return bool(self._value("root_mcp", self.settings.root_mcp))

    def log(self, kind: str, **fields: Any) -> None:
        """One line in the query log, when it is on."""
        if self.query_log_enabled:
            self.query_log.record(kind, **fields)

    @property
    def embedder_spec(self) -> str:
        return str(self._value("embedder", self.settings.embedder))

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
            "top_k": pick("top_k", env.top_k, HOOK_DEFAULT_TOP_K),
            "min_score": pick("min_score", env.min_score, min_score),
            "min_ratio": pick("min_ratio", env.min_ratio, HOOK_DEFAULT_MIN_RATIO),
            "max_chars": pick("max_chars", env.max_chars, HOOK_DEFAULT_MAX_CHARS),
        }

    def unrelated_score(self) -> float | None:
        emb = self.engine.embedder
        return emb.unrelated_score if emb is not None else unrelated_score(self.embedder_spec)

    def hook_settings(self, call: dict[str, Any], folder: HookOverrides | None) -> HookSettings:
        """Per key: the call's argument, the folder's `hook`, the server's saved value, the variable, default."""
        server = self.server_hook()
        own = folder.as_dict() if folder is not None else {}
        merged = {k: call[k] if call.get(k) is not None else own.get(k, server[k]) for k in server}
        return HookSettings(
            top_k=int(merged["top_k"]),
            min_score=float(merged["min_score"]),
            min_ratio=float(merged["min_ratio"]),
            max_chars=int(merged["max_chars"]),
        )
