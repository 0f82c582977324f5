"""``hansa``: the real app in this process, on SQLite in ``tmp_path``, with a FunctionModel."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inprocess.asgi import Hansa, running_app


@pytest.fixture
async def hansa(tmp_path: Path) -> AsyncIterator[Hansa]:
    """The app with the default ``FunctionModel(answer)``; tests needing another model
    call ``running_app`` themselves."""
    async with running_app(tmp_path) as app:
        yield app
