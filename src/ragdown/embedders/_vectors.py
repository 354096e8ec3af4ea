"""Small numeric helpers shared by the embedders."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .base import Vectors


def l2_normalize(matrix: npt.NDArray[np.floating]) -> Vectors:
    """Rows scaled to unit length, as float32; an all-zero row stays zero."""
    values = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(values, axis=-1, keepdims=True)
    safe = np.where(norms > 0, norms, np.float32(1.0))
    return np.ascontiguousarray(values / safe, dtype=np.float32)
