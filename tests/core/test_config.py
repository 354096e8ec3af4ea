from __future__ import annotations

from pathlib import Path

import pytest

from ragdown.core.config import ConfigError, Settings, validate_notes_dir


def test_defaults_follow_the_spec(tmp_path: Path) -> None:
    s = Settings.from_env({"RAGDOWN_DOCS_DIR": str(tmp_path), "HOME": str(tmp_path)})
    assert s.embedder == "granite-small"
    assert s.text_limit == 2000
    assert s.notes_dir == "notes"
    assert s.watch is True
    assert s.port == 3000
    assert s.keep_alive_timeout_ms == 75_000
    assert s.models_dir == tmp_path / ".cache" / "ragdown" / "models"


def test_data_dir_differs_per_mode(tmp_path: Path) -> None:
    s = Settings.from_env({"RAGDOWN_DOCS_DIR": str(tmp_path), "HOME": str(tmp_path)})
    stdio, serve = s.data_dir("stdio"), s.data_dir("serve")
    assert stdio != serve
    assert stdio.parent == tmp_path / ".cache" / "ragdown"
    assert len(stdio.name) == 16


def test_bad_values_name_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="RAGDOWN_WATCH"):
        Settings.from_env({"RAGDOWN_WATCH": "perhaps"})
    with pytest.raises(ConfigError, match="RAGDOWN_HOOK_MIN_SCORE"):
        Settings.from_env({"RAGDOWN_HOOK_MIN_SCORE": "2"})
    with pytest.raises(ConfigError, match="RAGDOWN_TEXT_LIMIT"):
        Settings.from_env({"RAGDOWN_TEXT_LIMIT": "many"})


def test_disabled_tools_are_trimmed() -> None:
    s = Settings.from_env({"RAGDOWN_DISABLED_TOOLS": " ragdown_stats , ragdown_reindex,,"})
    assert s.disabled_tools == frozenset({"ragdown_stats", "ragdown_reindex"})


@pytest.mark.parametrize("bad", ["../x", "/abs", ".hidden", "a/node_modules", "a\x00b", "C:/x"])
def test_notes_dir_must_stay_inside(bad: str) -> None:
    with pytest.raises(ConfigError):
        validate_notes_dir(bad)


def test_notes_dir_dot_is_the_root() -> None:
    assert validate_notes_dir(".") == "."
    assert validate_notes_dir("./agent/notes/") == "agent/notes"


def test_the_hnsw_settings_are_checked(tmp_path: Path) -> None:
    base = {"RAGDOWN_DOCS_DIR": str(tmp_path)}
    settings = Settings.from_env(base)
    assert (settings.hnsw_m, settings.hnsw_ef_construction, settings.hnsw_ef_search) == (16, 64, 400)
    with pytest.raises(
        ConfigError, match="RAGDOWN_HNSW_EF_CONSTRUCTION must be at least twice RAGDOWN_HNSW_M"
    ):
        Settings.from_env({**base, "RAGDOWN_HNSW_M": "48"})
    with pytest.raises(ConfigError, match="RAGDOWN_HNSW_M must be between 2 and 100"):
        Settings.from_env({**base, "RAGDOWN_HNSW_M": "1"})
    with pytest.raises(ConfigError, match="RAGDOWN_HNSW_EF_SEARCH must be between 1 and 1000"):
        Settings.from_env({**base, "RAGDOWN_HNSW_EF_SEARCH": "5000"})


def test_the_environment_is_shown_by_one_rule_for_every_setting() -> None:
    """`/api/status` `settings.env`: a set variable's value, None for every one not set (server or hook)."""
    nothing = Settings.from_env({}).environment()
    assert set(nothing.pop("hook").values()) == {None}
    assert set(nothing.values()) == {None}
    said = Settings.from_env(
        {"RAGDOWN_TEXT_LIMIT": "2000", "RAGDOWN_HOOK_MIN_RATIO": "0.95", "RAGDOWN_WATCH": " "}
    ).environment()
    assert (said["text_limit"], said["watch"], said["max_per_document"]) == (2000, None, None)
    assert said["hook"] == {"top_k": None, "min_score": None, "min_ratio": 0.95, "max_chars": None}
