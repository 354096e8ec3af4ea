from __future__ import annotations

import hashlib
import math
import re
import struct
import sys
import unicodedata
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from ragdown.embedders import Embedder, HashEmbedder, load_embedder
from ragdown.embedders.hash import HASH_DIM, hash_vector, tokenize


def reference_vector(tokens: list[str]) -> npt.NDArray[np.float32]:
    """The spec's recipe, written out independently: sha1 → LE uint32 of bytes 0-3 mod 384, sign from byte 4."""
    acc = [0.0] * 384
    for token in tokens:
        digest = hashlib.sha1(token.encode("utf-8")).digest()
        (word,) = struct.unpack("<I", digest[0:4])
        acc[word % 384] += 1.0 if (digest[4] & 0x01) == 0x01 else -1.0
    norm = math.sqrt(sum(v * v for v in acc))
    return np.array([v / norm if norm else 0.0 for v in acc], dtype=np.float32)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Run pg_restore twice.", ["run", "pg_restore", "twice"]),
        ("# Backups\n\nNightly snapshots.", ["backups", "nightly", "snapshots"]),
        ("restore RESTORE Restore", ["restore", "restore", "restore"]),
        ("Crème brûlée à Zürich", ["crème", "brûlée", "à", "zürich"]),
        ("東京タワー 2024年", ["東京タワー", "2024年"]),
        ("api_key=ABC-123/v2.0", ["api_key", "abc", "123", "v2", "0"]),
    ],
)
def test_vectors_are_bit_exact_with_the_spec_recipe(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens
    expected = reference_vector(tokens)
    got = HashEmbedder().embed_query(text)
    assert got.dtype == np.float32
    assert got.shape == (HASH_DIM,)
    assert np.array_equal(got, expected)


def test_a_single_token_sets_one_signed_bucket() -> None:
    digest = hashlib.sha1(b"restore").digest()
    bucket = int.from_bytes(digest[:4], "little") % 384
    sign = 1.0 if digest[4] & 1 else -1.0
    vector = hash_vector("Restore!")
    assert np.flatnonzero(vector).tolist() == [bucket]
    assert vector[bucket] == np.float32(sign)


def test_repeats_accumulate_and_rows_are_unit_length() -> None:
    embedder = HashEmbedder()
    vectors = embedder.embed_documents(["backup backup restore", "a b c d e f g", "x"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(vectors[0], reference_vector(["backup", "backup", "restore"]))


@pytest.mark.parametrize("text", ["", "   ", "!!! --- ...", "\u0301\u0302"])
def test_texts_without_tokens_give_the_zero_vector(text: str) -> None:
    vector = HashEmbedder().embed_query(text)
    assert not vector.any()
    assert not np.isnan(vector).any()


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # accents, precomposed: letters; decomposed: the combining mark (Mn) splits the word
        ("naïve café", ["naïve", "café"]),
        ("cafe\u0301", ["cafe"]),
        # CJK ideographs, kana with the prolonged sound mark (Lm), Hangul
        ("日本語のテキスト、한국어", ["日本語のテキスト", "한국어"]),
        # numbers of every category: Nd (Arabic-Indic), Nl (Roman numeral), No (superscript, circled)
        ("٣٤ Ⅻ x² ①", ["٣٤", "ⅻ", "x²", "①"]),
        # underscore joins; other connector punctuation and dashes split
        ("snake_case a‿b kebab-case", ["snake_case", "a", "b", "kebab", "case"]),
        # punctuation, symbols and whitespace split
        ("path/to/file.md:12 — a+b=c €5 ✓ok", ["path", "to", "file", "md", "12", "a", "b", "c", "5", "ok"]),
        # lowercasing is Unicode-wide, including the final sigma, before tokenising
        ("ΣΟΦΟΣ ÄÖÜ İstanbul", ["σοφος", "äöü", "i", "stanbul"]),
    ],
)
def test_tokenisation_of_unicode(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_python_word_class_is_exactly_unicode_letters_numbers_and_underscore() -> None:
    r"""`\w` must equal `[\p{L}\p{N}_]` on every code point of this Python's Unicode database."""
    word = re.compile(r"\w")
    mismatches = [
        cp
        for cp in range(sys.maxunicode + 1)
        if bool(word.match(chr(cp))) != (unicodedata.category(chr(cp))[0] in "LN" or cp == 0x5F)
    ]
    assert mismatches == [], [f"U+{cp:04X} {unicodedata.category(chr(cp))}" for cp in mismatches[:10]]


def test_deterministic_across_instances_and_calls() -> None:
    texts = ["Backups › Restore\n\nRun pg_restore twice.", "Kafka lag", "", "東京"]
    first = HashEmbedder().embed_documents(texts)
    second = HashEmbedder().embed_documents(list(reversed(texts)))[::-1]
    assert np.array_equal(first, second)
    assert np.array_equal(first[0], HashEmbedder().embed_query(texts[0]))


def test_similarity_is_word_overlap() -> None:
    embedder = HashEmbedder()
    a, b, c = embedder.embed_documents(["restore the backup", "Backup: restore THE", "kafka consumer lag"])
    assert float(a @ b) == pytest.approx(1.0)
    assert float(a @ c) < 0.5


def test_identity_and_floor() -> None:
    embedder = load_embedder("hash", models_dir=Path("/nonexistent"), threads=1)
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.dim, embedder.min_score, embedder.unrelated_score) == (
        "hash-384",
        384,
        0.8,
        None,
    )
    assert embedder.embed_documents([]).shape == (0, 384)


def test_a_large_batch_is_each_text_by_the_spec_recipe() -> None:
    """A batch of the size a test folder indexes gives, row for row, what each text gives alone (speed is
    not checked here: measure it in bench/)."""
    words = (
        "the nightly backup job restores postgres snapshots into a fresh replica before the migration".split()
    )
    texts = [" ".join(words[(i + j) % len(words)] for j in range(60)) + f" chunk{i}" for i in range(3000)]
    vectors = HashEmbedder().embed_documents(texts)
    assert vectors.shape == (3000, 384)
    assert vectors.dtype == np.float32
    assert np.array_equal(vectors, np.stack([reference_vector(tokenize(text)) for text in texts]))
