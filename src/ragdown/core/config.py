"""Settings: the only module that reads the environment, and the one schema of every setting.

Each setting is declared once in `SETTINGS` (its key, variable, type, bounds, default, label and help).
Everything else reads that declaration: `Settings.from_env` parses the `RAGDOWN_*` variables with it;
the saved server settings (`.ragdown-server.json`) and a folder's `hook` are checked with `problem`; the
tools take their argument bounds from `bounds`; `/api/status` sends `schema()` so the web UI's settings
pages show and check exactly the server's bounds. Bad values raise `ConfigError` with a sentence naming
the variable and what it accepts, so a typo never starts a server with a silently different behaviour.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from ragdown.core.cpus import default_threads
from ragdown.core.paths import notes_dir as check_notes_dir

Mode = Literal["stdio", "serve"]
Kind = Literal["bool", "int", "float", "str", "choice", "path", "list"]
Where = Literal["env", "server", "folder"]  # env only; also saved from the web UI; also per folder (hook)

DEFAULT_EMBEDDER = "granite-small"
OFFLINE_EMBEDDER = "minilm"  # installed with ragdown[offline]: used when the default cannot load
EMBEDDER_CHOICES = (
    "granite-small",
    "bge-small",
    "embeddinggemma",
    "minilm",
    "multilingual",
    "multilingual-e5-small",
    "granite-multilingual",
    "hash",
)
DEFAULT_EMBEDDING_URL = "https://api.openai.com/v1"
DEFAULT_HF_ENDPOINT = "https://huggingface.co"
SEARCH_TOP_K = (1, 50)  # hits one search may ask for (ragdown_recall, /api/search, the CLI)


class ConfigError(ValueError):
    """A variable holds a value ragdown cannot use."""


@dataclass(frozen=True)
class Setting:
    key: str  # the name in `.ragdown-server.json`, `/api/status` and (for `hook.*`) `.ragdown.json`
    variable: str | None
    kind: Kind
    default: Any  # None: no fixed default (the embedder's own, or computed)
    label: str
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()  # `choice`: the accepted values; `str`: suggestions
    where: tuple[Where, ...] = ("env",)
    check: Callable[[str], str] | None = None  # a further check of a text value (raises ValueError)

    @property
    def name(self) -> str:
        """How messages name it: the variable, else the key."""
        return self.variable or self.key

    def bound_text(self) -> str:
        if self.minimum is not None and self.maximum is not None:
            return f"between {_num(self.minimum)} and {_num(self.maximum)}"
        if self.minimum is not None:
            return f"at least {_num(self.minimum)}"
        return f"at most {_num(self.maximum or 0)}"

    def in_bounds(self, value: float) -> bool:
        return (self.minimum is None or value >= self.minimum) and (
            self.maximum is None or value <= self.maximum
        )

    def problem(self, value: Any, *, name: str | None = None) -> str | None:
        """Why a JSON `value` (a saved setting, a folder's hook value) is not valid, or None."""
        name = name or self.key
        if self.kind == "bool":
            return None if isinstance(value, bool) else f"{name} must be true or false"
        if self.kind in ("str", "choice"):
            if not isinstance(value, str) or not value.strip():
                return f"{name} must be a non-empty name"
            if self.kind == "choice" and value.strip().lower() not in self.choices:
                return f"{name} must be one of {', '.join(self.choices)}"
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{name} must be a {'whole number' if self.kind == 'int' else 'number'}"
        if self.kind == "int" and not isinstance(value, int):
            return f"{name} must be a whole number"
        if not self.in_bounds(value):
            return f"{name} must be {self.bound_text()}"
        return None

    def read(self, env: Mapping[str, str]) -> Any:
        """The variable's value, parsed; the default when it is unset or blank."""
        assert self.variable is not None
        raw = env.get(self.variable)
        if raw is None or raw.strip() == "":
            return self.default
        text = raw.strip()
        if self.kind == "bool":
            lowered = text.lower()
            if lowered in {"1", "true", "yes", "on"}:
                return True
            if lowered in {"0", "false", "no", "off"}:
                return False
            raise ConfigError(f"{self.variable} must be true or false, not {raw!r}")
        if self.kind in ("int", "float"):
            try:
                number: float = int(text) if self.kind == "int" else float(text)
            except ValueError:
                what = "a whole number" if self.kind == "int" else "a number"
                raise ConfigError(f"{self.variable} must be {what}, not {raw!r}") from None
            if not self.in_bounds(number):
                raise ConfigError(f"{self.variable} must be {self.bound_text()}, not {_num(number)}")
            return number
        if self.kind == "choice":
            if text.lower() not in self.choices:
                raise ConfigError(f"{self.variable} must be one of {', '.join(self.choices)}, not {raw!r}")
            return text.lower()
        if self.kind == "path":
            return Path(text).expanduser()
        if self.kind == "list":
            items = tuple(item.strip() for item in text.split(",") if item.strip())
            if self.check is not None:
                try:
                    return tuple(self.check(item) for item in items)
                except ValueError as err:
                    raise ConfigError(str(err)) from None
            return items
        if self.check is not None:
            try:
                return self.check(text)
            except ValueError as err:
                raise ConfigError(str(err)) from None
        return text

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "variable": self.variable,
            "kind": self.kind,
            "label": self.label,
            "help": self.help,
            "default": self.default,
            "where": list(self.where),
        }
        if self.minimum is not None:
            out["min"] = self.minimum
        if self.maximum is not None:
            out["max"] = self.maximum
        if self.choices:
            out["options"] = list(self.choices)
        return out


def _num(value: float) -> str:
    return f"{value:g}"


def validate_public_url(value: str) -> str:
    """`RAGDOWN_PUBLIC_URL`: an http(s) origin, no path, query or fragment; kept without a trailing `/`."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"RAGDOWN_PUBLIC_URL must be an http(s) URL such as https://notes.example.com, not {value!r}"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(
            f"RAGDOWN_PUBLIC_URL is the server's origin alone (https://notes.example.com), without a path, "
            f"query or user: not {value!r}"
        )
    return f"{parts.scheme}://{parts.netloc.lower()}"


def validate_database_url(value: str) -> str:
    """`RAGDOWN_DATABASE_URL`: a postgresql:// (or postgres://) URL."""
    text = value.strip()
    if urlsplit(text).scheme not in ("postgresql", "postgres"):
        raise ValueError(
            "RAGDOWN_DATABASE_URL must be a PostgreSQL URL such as postgresql://ragdown:secret@db.internal/ragdown"
        )
    return text


def validate_proxy(value: str) -> str:
    """One entry of `RAGDOWN_TRUSTED_PROXIES`: an IP address or a network (CIDR), kept as its network."""
    try:
        return str(ipaddress.ip_network(value.strip(), strict=False))
    except ValueError:
        raise ValueError(
            "RAGDOWN_TRUSTED_PROXIES is a comma-separated list of the proxies' addresses or networks, such as "
            f"127.0.0.1 or 10.0.0.0/8, not {value!r}"
        ) from None


_INDEX_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")


def validate_index_id(value: str) -> str:
    """`RAGDOWN_INDEX_ID`: letters, digits, `_` and `-`, up to 40; kept lowercase with `-` as `_`."""
    text = value.strip()
    if not _INDEX_ID.fullmatch(text):
        raise ValueError(f"RAGDOWN_INDEX_ID must be 1 to 40 letters, digits, _ or -, not {value!r}")
    return text.lower().replace("-", "_")


_SERVER: tuple[Where, ...] = ("env", "server")
_HOOK: tuple[Where, ...] = ("env", "server", "folder")

SETTINGS: tuple[Setting, ...] = (
    Setting("docs_dir", "RAGDOWN_DOCS_DIR", "path", None, "Docs directory",
            "For serve, the directory holding the folders; for stdio, the one folder."),
    Setting("data_dir", "RAGDOWN_DATA_DIR", "path", None, "Data directory",
            "The index. Deleting it only costs a rebuild."),
    Setting("models_dir", "RAGDOWN_MODELS", "path", None, "Model cache", "Where local models are kept."),
    Setting("database_url", "RAGDOWN_DATABASE_URL", "str", None, "Database URL",
            "postgresql://user:password@host/db: the index in PostgreSQL with pgvector (the postgres extra), "
            "shared by every serve replica that sets it. Unset: SQLite in the data directory.",
            check=validate_database_url),
    Setting("index_id", "RAGDOWN_INDEX_ID", "str", None, "Index id",
            "With RAGDOWN_DATABASE_URL: the index's name in the database (letters, digits, _ and -; up to 40). "
            "Replicas with the same name share one index; unset, a hash of the mode and the docs directory's "
            "path, so replicas must mount the docs at the same path.", check=validate_index_id),
    # pgvector's HNSW graph (index/pghnsw.py); the measured trade-offs are in docs/benchmarks.md section 14.
    Setting("hnsw_m", "RAGDOWN_HNSW_M", "int", 16, "HNSW links per vector",
            "With RAGDOWN_DATABASE_URL: the graph's links per vector (pgvector's m). More finds more of the "
            "true nearest sections at a million and up, for a longer build; the primary rebuilds the graph "
            "when it changes. Unset: 16, and 32 from 100,000 sections on.", minimum=2, maximum=100),
    Setting("hnsw_ef_construction", "RAGDOWN_HNSW_EF_CONSTRUCTION", "int", 64, "HNSW build candidates",
            "With RAGDOWN_DATABASE_URL: candidates weighed per vector while the graph is built (at least "
            "twice RAGDOWN_HNSW_M); the primary rebuilds the graph when it changes. Unset: 4 x RAGDOWN_HNSW_M, "
            "at least 64.", minimum=4, maximum=1000),
    Setting("hnsw_ef_search", "RAGDOWN_HNSW_EF_SEARCH", "int", 400, "HNSW search candidates",
            "With RAGDOWN_DATABASE_URL: candidates a dense search walks (pgvector's hnsw.ef_search): more "
            "finds more of the true nearest sections, more slowly. Unset: 400, and 600 from 500,000 sections "
            "on.", minimum=1, maximum=1000),
    Setting("embedder", "RAGDOWN_EMBEDDER", "str", DEFAULT_EMBEDDER, "Embedder",
            "granite-small, bge-small, embeddinggemma, minilm (installed, works offline), multilingual (ragdown[multilingual]: "
            "Chinese and ~100 languages, offline), multilingual-e5-small, granite-multilingual, openai:<model> or "
            "onnx:<dir>. A new one is loaded first, then the index is rebuilt with it.",
            choices=EMBEDDER_CHOICES, where=_SERVER),
    Setting("embedding_url", "RAGDOWN_EMBEDDING_URL", "str", DEFAULT_EMBEDDING_URL, "Embedding URL",
            "The OpenAI-compatible endpoint for openai:<model>."),
    Setting("embedding_api_key", "RAGDOWN_EMBEDDING_API_KEY", "str", None, "Embedding API key",
            "The key for openai:<model>."),
    Setting("llm_model", "RAGDOWN_LLM_MODEL", "str", None, "Model for retrieve",
            "<provider>:<model> (openai:<model> for any OpenAI-compatible chat endpoint, anthropic:<model>): "
            "the default of retrieve's --model (summaries need --summary-model). Unset: nothing "
            "is ever sent to a model."),
    Setting("llm_url", "RAGDOWN_LLM_URL", "str", None, "Model URL",
            "The chat endpoint's base URL (default: the provider's own; http://localhost:11434/v1 for Ollama)."),
    Setting("llm_api_key", "RAGDOWN_LLM_API_KEY", "str", None, "Model API key",
            "The key for the model's endpoint."),
    Setting("hf_endpoint", "HF_ENDPOINT", "str", DEFAULT_HF_ENDPOINT, "Model hub", "Where local models download from."),
    Setting("threads", "RAGDOWN_THREADS", "int", None, "Threads", "ONNX Runtime threads for the local model (default: the physical cores it may use).",
            minimum=1, maximum=256),
    Setting("quantize", "RAGDOWN_QUANTIZE", "bool", False, "Quantize",
            "Use a verified local int8 copy of a local ONNX model."),
    Setting("setext", "RAGDOWN_SETEXT", "bool", True, "Setext headings",
            "Read a line of --- or === under a paragraph as a heading (CommonMark). Off for libraries converted "
            "from PDF or HTML, whose page breaks are such lines; changing it rebuilds the index."),
    Setting("watch", "RAGDOWN_WATCH", "bool", True, "Watch the folders",
            "Without a watcher the index syncs on start, after writes made here and on ragdown_reindex.",
            where=_SERVER),
    Setting("write_wait", "RAGDOWN_WRITE_WAIT", "float", 30.0, "Write wait",
            "Most seconds a write waits for the index to have the change before it answers; past it the answer "
            "says the index is still syncing (the change is on disk either way). 0 answers at once.",
            minimum=0, maximum=3600),
    Setting("root_mcp", "RAGDOWN_ROOT_MCP", "bool", False, "Serve every folder at /mcp",
            "One MCP server, ragdown, over every folder with MCP on: the only place an agent can make a folder.",
            where=_SERVER),
    Setting("read_only", "RAGDOWN_READ_ONLY", "bool", False, "Read-only",
            "Hide the write tools, and refuse uploads, deletes and folder changes other than settings."),
    Setting("disabled_tools", "RAGDOWN_DISABLED_TOOLS", "list", (), "Disabled tools",
            "Tools to leave out, comma-separated."),
    Setting("toolset", "RAGDOWN_TOOLSET", "str", None, "Tool set",
            "The tools an MCP endpoint offers: ragdown (unset), markindex, readmedb, hallouminate, chatgpt, or a "
            "comma-separated union. Under "
            "stdio it wins over the folder's toolset setting; under serve it is the default of folders without "
            "one, and ?toolset= on an MCP URL wins over both."),
    Setting("notes_dir", "RAGDOWN_NOTES_DIR", "str", "notes", "Notes directory",
            "Where ragdown_remember writes, relative to each folder.", check=check_notes_dir),
    Setting("text_limit", "RAGDOWN_TEXT_LIMIT", "int", 2000, "Characters per hit",
            "How much of each hit ragdown_recall shows as text; every cut names the read that returns the "
            "rest. 0 never cuts.", minimum=0, where=_SERVER),
    Setting("max_per_document", "RAGDOWN_MAX_PER_DOCUMENT", "int", 0, "Sections per document",
            "Most sections of one document a search returns and the hook injects. 0 is no cap.",
            minimum=0, where=_SERVER),
    Setting("follow_links", "RAGDOWN_FOLLOW_LINKS", "int", 0, "Follow links",
            "How many of a search's best hits have the wikilinks of their section followed. 0 is off.",
            minimum=0, maximum=50, where=_SERVER),
    Setting("fusion", "RAGDOWN_FUSION", "choice", None, "Fusion",
            "rrf or score; unset, the fusion the embedder was measured best with.", choices=("rrf", "score")),
    Setting("query_log", "RAGDOWN_QUERY_LOG", "bool", False, "Query log",
            "Log every search, hook call and read to query-log.jsonl in the data dir, for Usage. It never "
            "leaves this server.", where=_SERVER),
    Setting("hook.top_k", "RAGDOWN_HOOK_TOP_K", "int", 4, "Sections per prompt",
            "Most sections ragdown_context returns for one prompt.", minimum=1, maximum=50, where=_HOOK),
    Setting("hook.min_score", "RAGDOWN_HOOK_MIN_SCORE", "float", None, "Minimum score",
            "Lowest cosine similarity injected. It is on the embedder's own scale: unset, it follows the "
            "embedder.", minimum=0, maximum=1, where=_HOOK),
    Setting("hook.min_ratio", "RAGDOWN_HOOK_MIN_RATIO", "float", None, "Minimum ratio",
            "Lowest share of the best hit's similarity a hit may have and still be injected. 0 turns it off. "
            "Unset, it follows the embedder: minilm's measured 0.92, the spec's 0.95 for the others.",
            minimum=0, maximum=1, where=_HOOK),
    Setting("hook.max_chars", "RAGDOWN_HOOK_MAX_CHARS", "int", 6000, "Characters per prompt",
            "Most characters of the sections ragdown_context adds for one prompt (the first always goes in, clipped to it); its caution lines come on top.", minimum=1, where=_HOOK),
    # A folder's quotas, in its .ragdown.json only (none by default); every write is checked against them.
    Setting("max_files", None, "int", None, "Most documents",
            "The most Markdown documents the folder may hold; a write that would make one more is refused.",
            minimum=1, maximum=10_000_000, where=("folder",)),
    Setting("max_bytes", None, "int", None, "Most bytes",
            "The most bytes the folder's documents may hold together; a write past it is refused.",
            minimum=1, maximum=1 << 50, where=("folder",)),
    Setting("max_file_bytes", None, "int", None, "Most bytes per document",
            "The largest document the folder takes (the index's own limit is 8 MiB).",
            minimum=1, maximum=1 << 50, where=("folder",)),
    Setting("history", "RAGDOWN_HISTORY", "bool", True, "Version history",
            "Keep every version of every document in .ragdown/history.sqlite beside the documents (false: off)."),
    Setting("history_days", "RAGDOWN_HISTORY_DAYS", "int", 30, "History days",
            "Keep every version made in the last this many days.", minimum=0),
    Setting("history_keep", "RAGDOWN_HISTORY_KEEP", "int", 20, "History versions",
            "Keep at least this many versions of each document, however old.", minimum=1),
    Setting("history_trash_days", "RAGDOWN_HISTORY_TRASH_DAYS", "int", None, "Trash days",
            "Forget a deleted document, with all its versions, this many days after its delete (unset: the "
            "trash keeps it until it is deleted for good).", minimum=0),
    Setting("port", "PORT", "int", 3000, "Port", "serve only: the HTTP port.", minimum=0, maximum=65535),
    Setting("keep_alive_timeout_ms", "HTTP_KEEP_ALIVE_TIMEOUT_MS", "int", 75_000, "Keep-alive",
            "serve only: how long an idle client connection is kept open (ms); 0 never closes one.", minimum=0),
    Setting("token", "RAGDOWN_TOKEN", "str", None, "Token", "serve only: the bearer token every route but status requires."),
    Setting("secure_local_net", "SECURE_LOCAL_NET", "bool", False, "Trusted network",
            "serve only: skip the token on a trusted network."),
    Setting("rate_limit", "RAGDOWN_RATE_LIMIT", "int", 600, "Rate limit",
            "serve only: requests per minute per key (per client address without one); over it, 429 with "
            "Retry-After. 0 is off.", minimum=0, maximum=1_000_000),
    Setting("allowed_hosts", "RAGDOWN_ALLOWED_HOSTS", "list", (), "Allowed hosts",
            "serve only: Host names accepted besides loopback and this machine's (a proxy's public name)."),
    Setting("allowed_origins", "RAGDOWN_ALLOWED_ORIGINS", "list", (), "Allowed origins",
            "serve only: browser origins accepted besides the bundled UI's own."),
    Setting("trusted_proxies", "RAGDOWN_TRUSTED_PROXIES", "list", (), "Trusted proxies",
            "serve only: the reverse proxies' addresses or networks (127.0.0.1, 10.0.0.0/8), comma-separated. "
            "Only a request from one of them has X-Forwarded-For (the client's address, whose rate limit it "
            "spends) and X-Forwarded-Proto believed; unset, none is, whatever a client sends.",
            check=validate_proxy),
    Setting("public_url", "RAGDOWN_PUBLIC_URL", "str", None, "Public URL",
            "serve only: the server's public origin (https://notes.example.com, no path), for the absolute URLs "
            "of OAuth and of 401 answers (its host an allowed Host); unset, each request's own scheme and Host.",
            check=validate_public_url),
    Setting("oauth_token_ttl", "RAGDOWN_OAUTH_TOKEN_TTL", "int", 3600, "OAuth token lifetime",
            "serve only: seconds an OAuth access token works before its client refreshes it.",
            minimum=60, maximum=86_400),
    Setting("oauth_refresh_days", "RAGDOWN_OAUTH_REFRESH_DAYS", "int", 30, "OAuth refresh lifetime",
            "serve only: days an unused OAuth refresh token lives (each refresh starts it again).",
            minimum=1, maximum=365),
    Setting("host", "RAGDOWN_HOST", "str", "0.0.0.0", "Listen address", "serve only: the address to listen on."),
    Setting("client_url", "RAGDOWN_URL", "str", None, "Server URL (client)",
            "The CLI client (ragdown ls, cat, write…): the server to use instead of the one ragdown login saved."),
    Setting("client_api_key", "RAGDOWN_API_KEY", "str", None, "API key (client)",
            "The CLI client: the key to send instead of the one ragdown login saved."),
    Setting("log_level", "RAGDOWN_LOG_LEVEL", "choice", "info", "Log level", "debug, info, warning or error.",
            choices=("debug", "info", "warning", "error")),
)  # fmt: skip

BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}
SERVER_KEYS: tuple[str, ...] = tuple(s.key for s in SETTINGS if "server" in s.where and "." not in s.key)
HOOK_KEYS: tuple[str, ...] = tuple(s.key.split(".", 1)[1] for s in SETTINGS if s.key.startswith("hook."))


def setting(key: str) -> Setting:
    return BY_KEY[key]


def problem(key: str, value: Any) -> str | None:
    """Why `value` is not valid for the setting `key` (`text_limit`, `hook.top_k`, …), or None."""
    return BY_KEY[key].problem(value)


def bounds(key: str) -> dict[str, float]:
    """A setting's bounds as pydantic `Field` keywords (`ge`, `le`), for tool arguments that override it."""
    s = BY_KEY[key]
    out: dict[str, float] = {}
    if s.minimum is not None:
        out["ge"] = s.minimum
    if s.maximum is not None:
        out["le"] = s.maximum
    return out


def schema() -> list[dict[str, Any]]:
    """The settings the web UI edits (saved server settings and folder hooks), as `/api/status` sends them."""
    return [s.as_json() for s in SETTINGS if "server" in s.where]


def folder_schema() -> list[dict[str, Any]]:
    """The settings only a folder has (its quotas), for the web UI's folder settings form."""
    return [s.as_json() for s in SETTINGS if "server" not in s.where and "folder" in s.where]


def validate_notes_dir(value: str) -> str:
    """`RAGDOWN_NOTES_DIR`: relative, no `..`, no dot-folder, no `node_modules`, no NUL; `.` is the root."""
    try:
        return check_notes_dir(value)
    except ValueError as err:
        raise ConfigError(str(err)) from None


@dataclass(frozen=True)
class ClientEnv:
    """What the CLI client (`ragdown/client/`) takes from the environment."""

    url: str | None  # RAGDOWN_URL, else READMEDB_URL
    api_key: str | None  # RAGDOWN_API_KEY, else READMEDB_API_KEY
    config_file: Path  # $XDG_CONFIG_HOME/ragdown/client.json, else ~/.config/ragdown/client.json


def client_env(env: Mapping[str, str] | None = None) -> ClientEnv:
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path(env.get("HOME", str(Path.home()))) / ".config"
    return ClientEnv(
        url=_client_value("client_url", env),
        api_key=_client_value("client_api_key", env),
        config_file=base / "ragdown" / "client.json",
    )


# ReadmeDB's `rdb` reads these: scripts written for it keep working. ragdown's own variable wins when both
# are set (it is the more specific: someone set it for ragdown).
READMEDB_CLIENT_ENV = {"client_url": "READMEDB_URL", "client_api_key": "READMEDB_API_KEY"}


def _client_value(key: str, env: Mapping[str, str]) -> str | None:
    value: str | None = BY_KEY[key].read(env)
    if value is None:
        other = env.get(READMEDB_CLIENT_ENV[key], "").strip()
        value = other or None
    return value


def _cache_root(env: Mapping[str, str]) -> Path:
    xdg = env.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path(env.get("HOME", str(Path.home()))) / ".cache"
    return base / "ragdown"


# Read by `Settings.from_env` besides the variables of `SETTINGS`; the secrets are never sent on.
_ENV_ALSO = ("XDG_CACHE_HOME", "HOME")
_ENV_SECRETS = frozenset(
    {
        "RAGDOWN_TOKEN",
        "RAGDOWN_EMBEDDING_API_KEY",
        "RAGDOWN_LLM_API_KEY",
        "RAGDOWN_DATABASE_URL",
        "RAGDOWN_API_KEY",
    }
)


def settings_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables `Settings.from_env` reads, those that are set, less the secrets: what `ragdown search`
    sends a running primary so it answers with the CLI's own settings (`tools/cli_answers.py`)."""
    env = os.environ if env is None else env
    names = {s.variable for s in SETTINGS if s.variable is not None} | set(_ENV_ALSO)
    return {name: env[name] for name in sorted(names - _ENV_SECRETS) if name in env}


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
    database_url: str | None = None  # RAGDOWN_DATABASE_URL: the index in PostgreSQL (index/backend.py)
    index_id: str | None = None
    hnsw_m: int = 16
    hnsw_ef_construction: int = 64
    hnsw_ef_search: int = 400
    models_dir: Path = field(default_factory=lambda: _cache_root(os.environ) / "models")
    cache_root: Path = field(default_factory=lambda: _cache_root(os.environ))
    embedder: str = DEFAULT_EMBEDDER
    embedder_chosen: bool = False  # RAGDOWN_EMBEDDER was set: never swapped for the offline model
    env_set: frozenset[str] = frozenset()  # the keys of `SETTINGS` whose variable is set (not the default)
    embedding_url: str = DEFAULT_EMBEDDING_URL
    embedding_api_key: str | None = None
    llm_model: str | None = None  # RAGDOWN_LLM_MODEL: <provider>:<model>; None sends nothing anywhere
    llm_url: str | None = None
    llm_api_key: str | None = None
    hf_endpoint: str = DEFAULT_HF_ENDPOINT
    threads: int = field(default_factory=default_threads)
    quantize: bool = False
    setext: bool = True
    watch: bool = True
    write_wait: float = 30.0  # RAGDOWN_WRITE_WAIT: most seconds a write waits for its sync
    root_mcp: bool = False
    read_only: bool = False
    disabled_tools: frozenset[str] = frozenset()
    notes_dir: str = "notes"
    toolset: str | None = None
    text_limit: int = 2000
    max_per_document: int = 0
    follow_links: int = 0
    fusion: str | None = None  # None: the embedder's measured default (rrf unless measured otherwise)
    query_log: bool = False
    hook: HookDefaults = HookDefaults()
    history: bool = True
    history_days: int = 30
    history_keep: int = 20
    history_trash_days: int | None = None
    port: int = 3000
    keep_alive_timeout_ms: int = 75_000
    token: str | None = None
    secure_local_net: bool = False
    rate_limit: int = 600
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    trusted_proxies: tuple[str, ...] = ()  # RAGDOWN_TRUSTED_PROXIES: networks, as `validate_proxy` keeps them
    public_url: str | None = None
    oauth_token_ttl: int = 3600
    oauth_refresh_days: int = 30
    host: str = "0.0.0.0"
    log_level: str = "INFO"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        values = {s.key: s.read(env) for s in SETTINGS if s.variable is not None}
        cache_root = _cache_root(env)
        set_here = frozenset(
            s.key for s in SETTINGS if s.variable is not None and (env.get(s.variable) or "").strip()
        )
        return cls(
            docs_dir=values["docs_dir"],
            data_dir_override=values["data_dir"],
            database_url=values["database_url"],
            index_id=values["index_id"],
            hnsw_m=values["hnsw_m"],
            hnsw_ef_construction=_ef_construction(values),
            hnsw_ef_search=values["hnsw_ef_search"],
            models_dir=values["models_dir"] or cache_root / "models",
            cache_root=cache_root,
            embedder=values["embedder"],
            embedder_chosen=bool((env.get("RAGDOWN_EMBEDDER") or "").strip()),
            env_set=set_here,
            embedding_url=values["embedding_url"],
            embedding_api_key=values["embedding_api_key"],
            llm_model=values["llm_model"],
            llm_url=values["llm_url"],
            llm_api_key=values["llm_api_key"],
            hf_endpoint=values["hf_endpoint"],
            threads=values["threads"] or default_threads(),
            quantize=values["quantize"],
            setext=values["setext"],
            watch=values["watch"],
            write_wait=float(values["write_wait"]),
            root_mcp=values["root_mcp"],
            read_only=values["read_only"],
            disabled_tools=frozenset(values["disabled_tools"]),
            notes_dir=values["notes_dir"],
            toolset=values["toolset"],
            text_limit=values["text_limit"],
            max_per_document=values["max_per_document"],
            follow_links=values["follow_links"],
            fusion=values["fusion"],
            query_log=values["query_log"],
            # A hook variable not set is None here: the next layer (saved, the embedder's own) decides.
            hook=HookDefaults(
                **{k: values[f"hook.{k}"] if f"hook.{k}" in set_here else None for k in HOOK_KEYS}
            ),
            history=values["history"],
            history_days=values["history_days"],
            history_keep=values["history_keep"],
            history_trash_days=values["history_trash_days"],
            port=values["port"],
            keep_alive_timeout_ms=values["keep_alive_timeout_ms"],
            token=values["token"],
            secure_local_net=values["secure_local_net"],
            rate_limit=values["rate_limit"],
            allowed_hosts=values["allowed_hosts"],
            allowed_origins=tuple(o.rstrip("/") for o in values["allowed_origins"]),
            trusted_proxies=values["trusted_proxies"],
            public_url=values["public_url"],
            oauth_token_ttl=values["oauth_token_ttl"],
            oauth_refresh_days=values["oauth_refresh_days"],
            host=values["host"],
            log_level=str(values["log_level"]).upper(),
        )

    def environment(self) -> dict[str, Any]:
        """What the environment says of each setting the web UI shows (`/api/status` `settings.env`), by one
        rule for all: the variable's value where it is set, None where it is not (the values in effect and
        where each comes from are beside it there)."""

        def said(key: str, value: Any) -> Any:
            return value if key in self.env_set else None

        return {
            **{key: said(key, getattr(self, key)) for key in SERVER_KEYS},
            "hook": {key: said(f"hook.{key}", getattr(self.hook, key)) for key in HOOK_KEYS},
        }

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


def _ef_construction(values: Mapping[str, Any]) -> int:
    """`RAGDOWN_HNSW_EF_CONSTRUCTION`, which pgvector wants at least twice `RAGDOWN_HNSW_M`."""
    m, ef = int(values["hnsw_m"]), int(values["hnsw_ef_construction"])
    if ef < 2 * m:
        raise ConfigError(
            f"RAGDOWN_HNSW_EF_CONSTRUCTION must be at least twice RAGDOWN_HNSW_M ({2 * m}), not {ef}"
        )
    return ef


def setting_default(key: str) -> Any:
    return BY_KEY[key].default
