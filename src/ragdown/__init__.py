"""ragdown: folders of Markdown as knowledge an AI agent can search, navigate, cite and safely edit."""

import os
from importlib.metadata import PackageNotFoundError, version

# Dense search is one matrix-vector product per query: BLAS threads only spin against each other and
# against the embedder's own threads (measured slower on 2 busy cores). Set before numpy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

try:
    __version__ = version("ragdown")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = ["__version__"]
