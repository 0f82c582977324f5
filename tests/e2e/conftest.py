from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import FAST, Server, running_server
from pg import fresh_schema


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("server")) as s:
        yield s


@pytest.fixture
def artifacts() -> Path:
    path = Path(__file__).resolve().parents[2] / "test-artifacts"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh schema on the local PostgreSQL server."""
    with fresh_schema() as url:
        yield url


@pytest.fixture
def api(tmp_path: Path, pg_url: str) -> Iterator[Server]:
    """An API process only (``--workers 0``) on ``pg_url``, with short leases."""
    with running_server(
        tmp_path, database_url=pg_url, extra_args=("--workers", "0"), env=FAST
    ) as server:
        yield server
