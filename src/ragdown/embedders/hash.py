"""`hash`: the deterministic test embedder, bit-exact with the behaviour spec (A13), named `hash-384`.

The text is lowercased and split into tokens matching `[\\p{L}\\p{N}_]+` (Unicode letters, Unicode numbers,
underscore). Each token's sha1 picks a bucket (first 4 bytes as a little-endian uint32, modulo 384) and a sign
(+ when bit 0 of byte 4 is set, else −); the signed counts are summed and the vector L2-normalised. An all-zero
vector (a text without tokens) stays zero. Its "similarity" is word overlap.

Tokenising: Python's `re` has no `\\p{..}`, but for `str` patterns CPython defines `\\w` as
`ch.isalnum() or ch == "_"`, where `isalnum` is `isalpha` (categories Lu, Ll, Lt, Lm, Lo) or one of
`isdecimal`/`isdigit`/`isnumeric` (Nd, Nl, No, plus CJK numerals such as 一 that are themselves Lo). That is
exactly `[\\p{L}\\p{N}_]`: no marks (Mn, Mc, Me), no connector punctuation besides `_`. (The third-party
`regex` module's `\\w` follows UTS #18 instead and *does* match marks and all of Pc, so it must not be used
here.) `tests/embedders/test_hash.py` checks the equivalence on every code point of this Python's Unicode
database, so a future change of `re` or of `unicodedata` fails loudly instead of silently moving vectors.
Lowercasing uses `str.lower()`, the full Unicode mapping as JavaScript's `toLowerCase()` (final sigma included).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from .base import Vectors

HASH_NAME = "hash-384"
HASH_DIM = 384
HASH_MIN_SCORE = 0.8

_TOKEN = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Lowercased tokens matching `[\\p{L}\\p{N}_]+`, in order, repeats kept."""
    return _TOKEN.findall(text.lower())


@lru_cache(maxsize=1 << 16)
def token_slot(token: str) -> tuple[int, int]:
    """`(bucket, sign)` of one lowercased token: sha1 bytes 0-3 as little-endian uint32 mod 384, and
    +1 when bit 0 of byte 4 is set, else -1."""
    digest = hashlib.sha1(token.encode("utf-8")).digest()
    bucket = int.from_bytes(digest[:4], "little") % HASH_DIM
    sign = 1 if digest[4] & 1 else -1
    return bucket, sign


def hash_vector(text: str) -> Vectors:
    """The `hash-384` vector of one text, float32, L2-normalised (all zeros when the text has no token)."""
    counts: dict[int, int] = {}  # bucket -> signed count, only the buckets a token fell in
    for token in tokenize(text):
        bucket, sign = token_slot(token)
        counts[bucket] = counts.get(bucket, 0) + sign
    # The sum of squares of integers is exact; the division is done in float64 and rounded once to
    # float32, as a JavaScript `Float32Array` store of `v / norm` does.
    norm = math.sqrt(sum(c * c for c in counts.values()))
    values = np.zeros(HASH_DIM, dtype=np.float64)
    if counts:
        values[list(counts)] = list(counts.values())
    if norm > 0:
        values = values / norm
    return values.astype(np.float32)


class HashEmbedder:
    """Word-overlap vectors for tests: no model, no network, deterministic across runs and machines."""

    @property
    def name(self) -> str:
        return HASH_NAME

    @property
    def dim(self) -> int:
        return HASH_DIM

    @property
    def min_score(self) -> float:
        return HASH_MIN_SCORE

    @property
    def unrelated_score(self) -> float | None:
        return None

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), HASH_DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = hash_vector(text)
        return out

    def embed_query(self, text: str) -> Vectors:
        return hash_vector(text)

    def __repr__(self) -> str:
        return "HashEmbedder()"
