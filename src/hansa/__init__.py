"""Hansa: multi-agent AI assistants that plan, act and show their work."""

from hansa.errors import HansaError

__all__ = ["HansaError", "__version__"]

__version__ = "0.1.0"
