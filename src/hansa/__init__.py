"""Hansa: multi-agent AI assistants that plan, act and show their work."""

from importlib import metadata

from hansa.errors import HansaError

__all__ = ["HansaError", "__version__"]

try:
    __version__ = metadata.version("hansa")
    """The installed distribution's version (``hansa --version``; the API's OpenAPI)."""
except metadata.PackageNotFoundError:  # a source tree on sys.path, never installed
    __version__ = "0+unknown"
