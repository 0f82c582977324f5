"""Fixtures shared by the model tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Run async tests on asyncio only (the local model bridges threads with asyncio)."""
    return "asyncio"
