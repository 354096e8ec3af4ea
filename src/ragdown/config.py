"""Settings: the only module that reads the environment.

Every `RAGDOWN_*` variable of the spec is parsed here into a typed, frozen `Settings`. Bad values raise
`ConfigError` with a sentence naming the variable and what it accepts, so a typo never starts a server
with a silently different behaviour.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

Mode = Literal["stdio", "serve"]

DEFAULT_EMBEDDER = "granite-small"
DEFAULT_TEXT_LIMIT = 2000
DEFAULT_NOTES_DIR = "notes"
DEFAULT_PORT = 3000
DEFAULT_KEEP_ALIVE_MS = 75_000
DEFAULT_EMBEDDING_URL = "https://api.openai.com/v1"
DEFAULT_HF_ENDPOINT = "https://huggingface.co"


class ConfigError(ValueError):
    """A variable holds a value ragdown cannot use."""


def _cache_root(env: Mapping[str, str]) -> Path:
    xdg = env.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path(env.get("HOME", str(Path.home()))) / ".cache"
    return base / "ragdown"


def default_threads() -> int:
    """Half the logical cores, at least one (measured faster than all cores on hybrid CPUs)."""
    return max(1, (os.cpu_count() or 2) // 2)


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name} must be true or false, not {raw!r}")


def _int(
    env: Mapping[str, str], name: str, default: int, *, minimum: int = 0, maximum: int | None = None
) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {raw!r}") from None
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
        raise ConfigError(f"{name} must be {bound}, not {value}")
    return value


def _opt_int(env: Mapping[str, str], name: str, *, minimum: int, maximum: int | None = None) -> int | None:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return None
    return _int(env, name, 0, minimum=minimum, maximum=maximum)


def _opt_float(env: Mapping[str, str], name: str, *, minimum: float, maximum: float) -> float | None:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        raise ConfigError(f"{name} must be a number, not {raw!r}") from None
    if not (minimum <= value <= maximum):
        raise ConfigError(f"{name} must be between {minimum} and {maximum}, not {value}")
    return value


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str | None:
    raw = (env.get(name) or "").strip().lower()
    if not raw:
        return None
    if raw not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}, not {raw!r}")
    return raw


def _str(env: Mapping[str, str], name: str) -> str | None:
    raw = env.get(name)
    if raw is None:
        return None
    raw = raw.strip()
    return raw or None


def validate_notes_dir(value: str) -> str:
    """`RAGDOWN_NOTES_DIR`: relative, no `..`, no dot-folder, no `node_modules`, no NUL; `.` is the root."""
    raw = value.strip().replace("\\", "/")
    if "\x00" in raw:
        raise ConfigError("RAGDOWN_NOTES_DIR must not contain a NUL character")
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        raise ConfigError(f"RAGDOWN_NOTES_DIR must be a relative path inside the folder, not {value!r}")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    for part in parts:
        if part == "..":
            raise ConfigError(f"RAGDOWN_NOTES_DIR must not climb out of the folder: {value!r}")
        if part.startswith(".") or part == "node_modules":
            raise ConfigError(f"RAGDOWN_NOTES_DIR must not name a dot-folder or node_modules: {value!r}")
    return "/".join(parts) or "."


@dataclass(frozen=True)
class HookDefaults:
    """`RAGDOWN_HOOK_*` as set in the environment; `None` means "not set here"."""

    top_k: int | None = None
    min_score: float | None = None
    min_ratio: float | None = None
    max_chars: int | None = None


@dataclass(frozen=True)
class Settings:
    docs_dir: Path | None = None
    data_dir_override: Path | None = None
    models_dir: Path = field(default_factory=lambda: _cache_root(os.environ) / "models")
    cache_root: Path = field(default_factory=lambda: _cache_root(os.environ))
    embedder: str = DEFAULT_EMBEDDER
    embedding_url: str = DEFAULT_EMBEDDING_URL
    embedding_api_key: str | None = None
    hf_endpoint: str = DEFAULT_HF_ENDPOINT
    threads: int = field(default_factory=default_threads)
    quantize: bool = False
    watch: bool = True
    root_mcp: bool = False
    read_only: bool = False
    disabled_tools: frozenset[str] = frozenset()
    notes_dir: str = DEFAULT_NOTES_DIR
    text_limit: int = DEFAULT_TEXT_LIMIT
    max_per_document: int = 0
    follow_links: int = 0
    fusion: str | None = None  # None: the embedder's measured default (rrf unless measured otherwise)
    query_log: bool = False
    hook: HookDefaults = HookDefaults()
    port: int = DEFAULT_PORT
    keep_alive_timeout_ms: int = DEFAULT_KEEP_ALIVE_MS
    token: str | None = None
    secure_local_net: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    host: str = "0.0.0.0"
    log_level: str = "INFO"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        docs = _str(env, "RAGDOWN_DOCS_DIR")
        data = _str(env, "RAGDOWN_DATA_DIR")
        models = _str(env, "RAGDOWN_MODELS")
        cache_root = _cache_root(env)
        disabled = frozenset(
            name.strip() for name in (env.get("RAGDOWN_DISABLED_TOOLS") or "").split(",") if name.strip()
        )
        hosts = tuple(h.strip() for h in (env.get("RAGDOWN_ALLOWED_HOSTS") or "").split(",") if h.strip())
        origins = tuple(
            o.strip().rstrip("/") for o in (env.get("RAGDOWN_ALLOWED_ORIGINS") or "").split(",") if o.strip()
        )
        level = (_str(env, "RAGDOWN_LOG_LEVEL") or "INFO").upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
            raise ConfigError(f"RAGDOWN_LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR, not {level!r}")
        return cls(
            docs_dir=Path(docs).expanduser() if docs else None,
            data_dir_override=Path(data).expanduser() if data else None,
            models_dir=Path(models).expanduser() if models else cache_root / "models",
            cache_root=cache_root,
            embedder=_str(env, "RAGDOWN_EMBEDDER") or DEFAULT_EMBEDDER,
            embedding_url=_str(env, "RAGDOWN_EMBEDDING_URL") or DEFAULT_EMBEDDING_URL,
            embedding_api_key=_str(env, "RAGDOWN_EMBEDDING_API_KEY"),
            hf_endpoint=_str(env, "HF_ENDPOINT") or DEFAULT_HF_ENDPOINT,
            threads=_int(env, "RAGDOWN_THREADS", default_threads(), minimum=1, maximum=256),
            quantize=_bool(env, "RAGDOWN_QUANTIZE", False),
            watch=_bool(env, "RAGDOWN_WATCH", True),
            root_mcp=_bool(env, "RAGDOWN_ROOT_MCP", False),
            read_only=_bool(env, "RAGDOWN_READ_ONLY", False),
            disabled_tools=disabled,
            notes_dir=validate_notes_dir(env.get("RAGDOWN_NOTES_DIR") or DEFAULT_NOTES_DIR),
            text_limit=_int(env, "RAGDOWN_TEXT_LIMIT", DEFAULT_TEXT_LIMIT, minimum=0),
            max_per_document=_int(env, "RAGDOWN_MAX_PER_DOCUMENT", 0, minimum=0),
            follow_links=_int(env, "RAGDOWN_FOLLOW_LINKS", 0, minimum=0, maximum=50),
            fusion=_choice(env, "RAGDOWN_FUSION", ("rrf", "score")),
            query_log=_bool(env, "RAGDOWN_QUERY_LOG", False),
            hook=HookDefaults(
                top_k=_opt_int(env, "RAGDOWN_HOOK_TOP_K", minimum=1, maximum=50),
                min_score=_opt_float(env, "RAGDOWN_HOOK_MIN_SCORE", minimum=0.0, maximum=1.0),
                min_ratio=_opt_float(env, "RAGDOWN_HOOK_MIN_RATIO", minimum=0.0, maximum=1.0),
                max_chars=_opt_int(env, "RAGDOWN_HOOK_MAX_CHARS", minimum=1),
            ),
            port=_int(env, "PORT", DEFAULT_PORT, minimum=0, maximum=65535),
            keep_alive_timeout_ms=_int(env, "HTTP_KEEP_ALIVE_TIMEOUT_MS", DEFAULT_KEEP_ALIVE_MS, minimum=0),
            token=_str(env, "RAGDOWN_TOKEN"),
            secure_local_net=_bool(env, "SECURE_LOCAL_NET", False),
            allowed_hosts=hosts,
            allowed_origins=origins,
            host=_str(env, "RAGDOWN_HOST") or "0.0.0.0",
            log_level=level,
        )

    def with_docs_dir(self, docs_dir: Path) -> Settings:
        return replace(self, docs_dir=docs_dir)

    def require_docs_dir(self) -> Path:
        if self.docs_dir is None:
            raise ConfigError("RAGDOWN_DOCS_DIR is required: the directory of Markdown to serve")
        path = self.docs_dir.expanduser().resolve()
        if not path.is_dir():
            raise ConfigError(f"RAGDOWN_DOCS_DIR is not a directory: {self.docs_dir}")
        return path

    def data_dir(self, mode: Mode) -> Path:
        """`RAGDOWN_DATA_DIR`, or `~/.cache/ragdown/<sha256("<mode>:<docs dir>")[:16]>`.

        The mode is part of the hash so `serve` and `stdio` on the same directory keep separate indexes.
        """
        if self.data_dir_override is not None:
            return self.data_dir_override
        docs = self.require_docs_dir()
        digest = hashlib.sha256(f"{mode}:{docs}".encode()).hexdigest()[:16]
        return self.cache_root / digest
