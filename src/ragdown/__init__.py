"""ragdown: folders of Markdown as knowledge an AI agent can search, navigate, cite and safely edit."""

import os

# Dense search is one matrix-vector product per query: BLAS threads only spin against each other and
# against the embedder's own threads (measured slower on 2 busy cores). Set before numpy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# The one place the version is written; pyproject.toml reads it from here.
__version__ = "0.1.0"

__all__ = ["__version__"]
