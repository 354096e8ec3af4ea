"""Chinese, Japanese and mixed-text lexical search: words, bigrams, symbol names, the trigram pass, lazy loading."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import ragdown.search.hybrid as hybrid
import ragdown.storage.lexical as lexical
from ragdown.engine.engine import Engine
from ragdown.search.hybrid import SearchOptions
from ragdown.search.query import fts_match
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.sqlite.store import DB_NAME, Store
from tests.conftest import BOTH_BACKENDS, isolated_env, write

OpenEngine = Callable[..., Engine]
# Each engine test runs on SQLite and on PostgreSQL (`tests/conftest.py`).
INDEX_BACKENDS = BOTH_BACKENDS


def lexical_paths(engine: Engine, query: str, size: int = 10) -> list[str]:
    """The paths of `lexical_pool`'s chunks, best first (what `ragdown eval --mode lexical` ranks)."""
    pool = engine.require_searcher().lexical_pool(query, FileFilter(), size)
    records = engine.require_store().chunks_by_id([cid for cid, _ in pool])
    return [records[cid].path for cid, _ in pool]


def word_pass_paths(engine: Engine, query: str) -> list[str]:
    """The paths BM25 over the words alone finds (no substring pass)."""
    match = fts_match(query)
    assert match is not None
    found = engine.require_store().bm25(match, FileFilter(), 10, hybrid.BM25_WEIGHTS)
    records = engine.require_store().chunks_by_id([cid for cid, _ in found])
    return [records[cid].path for cid, _ in found]


def write_chinese(docs: Path) -> None:
    write(docs, "常见问题.md", "# 常见问题\n\n我该怎么办？请联系支持。\n")
    write(docs, "仓库.md", "# 管理仓库\n\n## 重命名仓库\n\n在仓库列表中，选择重命名仓库。\n")
    write(docs, "安装.md", "# 下载\n\n在 Android 上安装应用。\n")


@pytest.mark.backends("sqlite")  # a fresh index by moving the data dir aside
def test_words_drop_the_question_words_that_bigrams_matched(
    docs: Path, open_engine: OpenEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_chinese(docs)
    monkeypatch.setattr(lexical, "SEGMENTATION", "bigrams")
    before = open_engine(docs)
    # Bigrams: `怎么` matches the FAQ that says 我该怎么办, and `装` alone matches nothing.
    assert lexical_paths(before, "怎么给仓库改名？") == ["仓库.md", "常见问题.md"]
    assert lexical_paths(before, "怎么装？") == ["常见问题.md"]
    before.close()
    monkeypatch.setattr(lexical, "SEGMENTATION", "words")
    (docs.parent / "data").rename(docs.parent / "data-bigrams")
    now = open_engine(docs)
    assert lexical_paths(now, "怎么给仓库改名？") == ["仓库.md"]
    # The one-character word 装 finds 安装 through the index's single Han characters.
    assert lexical_paths(now, "怎么装？") == ["安装.md"]


def test_the_index_text_holds_words_bigrams_and_characters() -> None:
    tokens = lexical.lexical_text("白板里让所有卡片都显示出来的快捷键").split()
    assert "快捷键" in tokens  # a word of the segmenter
    assert "片都" in tokens  # a bigram across two words: the query may cut it another way
    assert "键" in tokens  # a Han character
    query = lexical.query_text("怎么打开快捷键设置？").split()
    assert {"快捷键", "快捷", "键"} <= set(query)
    assert not {"怎么", "怎", "么打"} & set(query)  # the question word and the bigram across it are gone
    assert lexical.query_text("什么是").split() == []  # only stop words: nothing ...
    assert lexical.query_text("什么是", keep_stop_words=True).split()  # ... unless they are all there is


def test_a_question_of_only_stop_words_still_searches(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "定义.md", "# 定义\n\n什么是别名？别名是笔记的另一个名字。\n")
    write(docs, "其他.md", "# 其他\n\n完全无关的内容。\n")
    engine = open_engine(docs)
    assert lexical_paths(engine, "什么是")[0] == "定义.md"


def test_identifiers_are_found_whole(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "cpp.md", "# 语言\n\n插件可以用 C++ 编写。\n")
    write(docs, "c.md", "# 另一种\n\n插件也可以用 C 编写，c 是一门语言。\n")
    write(docs, "iso.md", "# 认证\n\n我们符合 ISO-27001 标准。\n")
    write(docs, "iso-apart.md", "# 文件\n\n见 ISO 9001 与第 27001 号文件。\n")
    write(docs, "v21.md", "# 更新\n\n在 v2.1 版本中新增了白板。\n")
    write(docs, "v2.md", "# 旧版\n\nv2 版本的第 1 项改动。\n")
    write(docs, "dot.md", "# 设置\n\n打开 `.obsidian` 文件夹。\n")
    write(docs, "app.md", "# 应用\n\nObsidian 是一个笔记应用，Obsidian 很好用。\n")
    engine = open_engine(docs)
    # unicode61 alone would make `C++` the `c` of both notes, and `.obsidian` the app's name.
    assert word_pass_paths(engine, "C++") == ["cpp.md"]
    assert lexical_paths(engine, "用 C++ 编写插件")[0] == "cpp.md"
    assert word_pass_paths(engine, ".obsidian") == ["dot.md"]
    # Compounds are the phrase of their parts: both parts in the other note, never side by side.
    assert word_pass_paths(engine, "ISO-27001") == ["iso.md"]
    assert lexical_paths(engine, "ISO-27001认证")[0] == "iso.md"
    assert word_pass_paths(engine, "v2.1") == ["v21.md"]
    assert lexical_paths(engine, "v2.1 新增了什么")[0] == "v21.md"


def test_japanese_notes_are_found_by_japanese_questions(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "ja/復元.md", "# スナップショット\n\nファイルの復元はスナップショットから行います。\n")
    write(docs, "ja/設定.md", "# 設定\n\n設定を変更するには、設定画面を開きます。\n")
    write(docs, "ja/同期.md", "# 同期\n\nデバイス間でノートを同期します。\n")
    write(docs, "zh/同步.md", "# 同步\n\n在设备之间同步笔记。\n")
    engine = open_engine(docs)
    assert lexical_paths(engine, "スナップショットを復元する方法は？")[0] == "ja/復元.md"
    assert lexical_paths(engine, "設定の変更")[0] == "ja/設定.md"
    assert lexical_paths(engine, "ノートを同期したい")[0] == "ja/同期.md"
    # A katakana word is a token of its own; hiragana between words is grammar, not searched for.
    assert "スナップショット" in lexical.lexical_text("スナップショットから").split()
    query = lexical.query_text("スナップショットを復元").split()
    assert {"スナップショット", "復元"} <= set(query)
    assert not [t for t in query if "を" in t]


def test_mixed_chinese_and_english_text(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "sync.md", "# Sync 常见问题\n\nObsidian Sync 的版本历史保留 12 个月。\n")
    write(docs, "publish.md", "# Publish\n\nObsidian Publish 的网站可以自定义域名。\n")
    write(docs, "git.md", "# 备份\n\n使用Git备份仓库，或者用rsync。\n")
    write(docs, "wide.md", "# 全角\n\n也可以用　Ｄｒｏｐｂｏｘ　同步。\n")
    engine = open_engine(docs)
    assert lexical_paths(engine, "Obsidian Sync 的版本历史保留多久？")[0] == "sync.md"
    # No space between the English and the Chinese: each side is still its own token.
    assert lexical_paths(engine, "Git")[0] == "git.md"
    assert lexical_paths(engine, "怎么用 rsync 备份")[0] == "git.md"
    # Full-width letters are folded on both sides.
    assert word_pass_paths(engine, "Dropbox") == ["wide.md"]


def test_the_trigram_pass_finds_substrings_the_words_miss(
    docs: Path, open_engine: OpenEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(docs, "exact.md", "# Layout\n\nThe workspace layout is saved on exit.\n")
    write(docs, "files.md", "# 文件\n\n布局保存在 workspaces.json 中，审计依据 ISO27001。\n")
    write(docs, "other.md", "# Other\n\nNothing of the kind.\n")
    engine = open_engine(docs)
    # `workspaces` and `iso27001` are single tokens: no word query `workspace` or `27001` reaches them.
    assert word_pass_paths(engine, "workspace") == ["exact.md"]
    assert lexical_paths(engine, "workspace") == ["exact.md", "files.md"]
    assert lexical_paths(engine, "27001 审计") == ["files.md"]
    assert lexical_paths(engine, "27001") == ["files.md"]
    pool = engine.require_searcher().lexical_pool("workspace", FileFilter(), 10)
    assert pool[0][1] > pool[1][1] > 0  # a substring ranks after every word match
    monkeypatch.setattr(hybrid, "SUBSTRING_PASS", False)
    assert lexical_paths(engine, "workspace") == ["exact.md"]
    assert lexical_paths(engine, "27001") == []


def test_an_english_corpus_never_loads_the_segmenter(docs: Path, tmp_path: Path) -> None:
    write(docs, "ops/backups.md", "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n")
    write(docs, "ops/cpp.md", "# Build\n\nThe C++ build uses .clang-format and ISO-27001 notes.\n")
    code = """
import sys
from pathlib import Path
from ragdown.core.config import Settings
from ragdown.engine.engine import Engine
from ragdown.storage.filter_sql import FileFilter
from ragdown.search.hybrid import SearchOptions

docs = Path(sys.argv[1])
engine = Engine(Settings.from_env(), "stdio", docs_dir=docs)
engine.start(background=False, initial_sync=False, watch=False)
engine.sync()
hits = engine.search("how do I restore the C++ build", FileFilter(), SearchOptions(top_k=3))
print(bool(hits), "rjieba" in sys.modules)
engine.search("怎么恢复备份", FileFilter(), SearchOptions(top_k=3))
print("rjieba" in sys.modules)
engine.close()
"""
    env = isolated_env(tmp_path, RAGDOWN_DOCS_DIR=str(docs), RAGDOWN_DATA_DIR=str(tmp_path / "data"))
    out = subprocess.run(
        [sys.executable, "-c", code, str(docs)], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False", "True"]


@pytest.mark.backends("sqlite")  # a fresh index by moving the data dir aside
def test_english_search_is_the_same_with_and_without_cjk_words(
    docs: Path, open_engine: OpenEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        docs, "ops/backups.md", "# Backups\n\nNightly snapshots of the db.\n\n## Restore\n\nRun pg_restore.\n"
    )
    write(docs, "ops/deploy.md", "# Deploy\n\nShip v1.2.3 with db-curlew-indexer and Ctrl+Shift+T.\n")
    write(docs, "notes.md", "# Notes\n\nRestore the snapshots before you deploy, twice.\n")
    queries = ["how do I restore a backup", "db-curlew-indexer", "v1.2.3", "nightly snapshots", "deploy"]
    now = open_engine(docs)
    found = [now.require_searcher().lexical_pool(q, FileFilter(), 10) for q in queries]
    assert lexical.lexical_text("Plain English, no symbols: v1.2.3 and db-curlew.") == (
        "Plain English, no symbols: v1.2.3 and db-curlew."
    )
    now.close()
    monkeypatch.setattr(lexical, "SEGMENTATION", "bigrams")
    (docs.parent / "data").rename(docs.parent / "data-words")
    before = open_engine(docs)
    assert [before.require_searcher().lexical_pool(q, FileFilter(), 10) for q in queries] == found


def test_an_edited_chinese_note_leaves_no_stale_tokens(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "a.md", "# 说明\n\n旧的快捷键说明文字。\n")
    engine = open_engine(docs)
    assert lexical_paths(engine, "快捷键") == ["a.md"]
    write(docs, "a.md", "# 说明\n\n新的命令面板介绍。\n")
    engine.sync()
    # The delete trigger re-made the very tokens the insert made, so nothing of the old text is left
    # (other tokens would leave the FTS table malformed, and BM25 would raise).
    assert word_pass_paths(engine, "快捷键") == []
    assert engine.require_store().substrings('"快捷键"', FileFilter(), 10, (1.0, 1.0, 1.0)) == []
    assert lexical_paths(engine, "命令面板") == ["a.md"]


@pytest.mark.backends("sqlite")  # reads and writes SQLite's file itself
def test_an_index_tokenised_by_other_rules_is_re_tokenised(
    docs: Path, open_engine: OpenEngine, tmp_path: Path
) -> None:
    write(docs, "附件.md", "# 附件\n\n更改默认附件储存位置。\n")
    open_engine(docs).close()
    path = tmp_path / "data" / DB_NAME
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'lexical'").fetchone() == (lexical.signature(),)
    # As if another segmenter had made the tokens: the FTS rows are wiped and the signature is another.
    conn.execute("UPDATE meta SET value = '1:bigrams' WHERE key = 'lexical'")
    conn.commit()
    conn.close()
    store = Store(path.parent, writable=True)
    try:
        assert store.bm25('"附件"', FileFilter(), 10, (1.0, 1.0, 1.0))
        assert store.substrings('"储存位"', FileFilter(), 10, (1.0, 1.0, 1.0))
        made_by = store._reader().execute("SELECT value FROM meta WHERE key = 'lexical'").fetchone()
        assert made_by == (lexical.signature(),)
    finally:
        store.close()


def test_without_a_segmenter_chinese_is_searched_by_bigrams(
    docs: Path, open_engine: OpenEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lexical, "_cut", None)
    monkeypatch.setattr(lexical, "_missing", True)
    write(docs, "附件.md", "# 附件\n\n## 更改默认附件储存位置\n\n你可以在设置中更改默认的附件储存位置。\n")
    write(docs, "折叠.md", "# 折叠\n\n折叠功能默认是开启的。\n")
    engine = open_engine(docs)
    assert lexical_paths(engine, "怎么更改附件的储存位置？")[0] == "附件.md"
    assert not lexical.segmenter_loaded()
    hits = engine.search("折叠功能", FileFilter(), SearchOptions(top_k=3))
    assert hits[0].path == "折叠.md"
