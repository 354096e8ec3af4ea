"""minilm reads 256 tokens: a longer chunk is embedded window by window, and its end is found."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragdown.core.config import Settings
from ragdown.embedders import OnnxEmbedder
from ragdown.embedders.base import WindowedEmbedder
from ragdown.embedders.onnx import MAX_WINDOWS
from ragdown.engine.engine import Engine
from ragdown.storage.filter_sql import FileFilter
from tests.conftest import isolated_env, write

pytestmark = pytest.mark.integration

HEAD = "Runbook › Restore\n\n"
FILLER = " ".join(["The nightly snapshot is copied to the cold bucket and checked by the backup job."] * 30)
TAIL = "Finally, page the database owner, Ingrid Halvorsen, on the incident channel."


def test_a_text_the_model_reads_whole_is_one_window_equal_to_embed_documents(minilm: OnnxEmbedder) -> None:
    assert isinstance(minilm, WindowedEmbedder)
    (windows,) = minilm.embed_document_windows([HEAD], ["Run pg_restore twice."])
    assert windows.shape == (1, minilm.dim)
    assert np.allclose(windows[0], minilm.embed_documents([HEAD + "Run pg_restore twice."])[0], atol=1e-5)


def test_a_long_text_is_cut_into_windows_each_read_with_its_head(minilm: OnnxEmbedder) -> None:
    body = f"{FILLER} {TAIL}"
    (windows,) = minilm.embed_document_windows([HEAD], [body])
    assert windows.shape[0] >= 2
    assert np.allclose(np.linalg.norm(windows, axis=1), 1.0, atol=1e-5)
    # The first window is what the model read before (the text cut at 256 tokens); the end is in the last.
    assert float(windows[0] @ minilm.embed_documents([HEAD + body])[0]) > 0.999
    query = minilm.embed_query("who do I page on the incident channel, Ingrid Halvorsen?")
    assert float(np.max(windows[1:] @ query)) > float(windows[0] @ query) + 0.05
    huge = " ".join([FILLER] * 40)
    (capped,) = minilm.embed_document_windows([HEAD], [huge])
    assert capped.shape[0] == MAX_WINDOWS


def test_the_index_finds_a_long_section_by_its_last_sentence(tmp_path: Path, minilm: OnnxEmbedder) -> None:
    docs = tmp_path / "docs"
    write(docs, "restore.md", f"# Runbook\n\n## Restore\n\n{FILLER}\n\n{TAIL}\n")
    rival = "Escalate on the incident channel to the platform lead after thirty minutes."
    write(docs, "oncall.md", f"# On-call\n\n## Escalation\n\n{rival}\n")
    query = "page Ingrid Halvorsen on the incident channel"
    qvec = minilm.embed_query(query)
    # Cut at 256 tokens, the restore section never mentions her: the rival would come first.
    cut = minilm.embed_documents(
        [f"Runbook › Restore\n\n{FILLER}\n\n{TAIL}", f"On-call › Escalation\n\n{rival}"]
    )
    assert float(cut[0] @ qvec) < float(cut[1] @ qvec)
    env = isolated_env(tmp_path, RAGDOWN_DOCS_DIR=str(docs), RAGDOWN_DATA_DIR=str(tmp_path / "data"))
    engine = Engine(Settings.from_env(env), "stdio", docs_dir=docs, embedder=minilm)
    engine.start(background=False, initial_sync=False, watch=False)
    try:
        engine.sync()
        searcher = engine.require_searcher()
        pool = searcher.dense_pool(searcher.embed_query(query), FileFilter(), 5)
        records = engine.require_store().chunks_by_id([cid for cid, _ in pool])
        assert records[pool[0][0]].path == "restore.md"
        # One chunk, however many windows: it appears once in the pool.
        assert len({cid for cid, _ in pool}) == len(pool)
    finally:
        engine.close()
