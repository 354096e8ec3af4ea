"""ragdown: folders of Markdown as knowledge an AI agent can search, navigate, cite and safely edit."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ragdown")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = ["__version__"]
