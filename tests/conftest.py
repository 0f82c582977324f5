"""Shared fixtures: async tests run on asyncio through anyio's pytest plugin."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_unconfigure(config: pytest.Config) -> None:
    # llama_cpp opens /dev/null at import and never closes it; closing it here keeps
    # the interpreter's exit from printing a ResourceWarning after pytest's summary.
    import sys

    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        handle = getattr(utils, name, None)
        if handle is not None:
            handle.close()
