from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import Server, running_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("server")) as s:
        yield s


@pytest.fixture
def artifacts() -> Path:
    path = Path(__file__).resolve().parents[2] / "test-artifacts"
    path.mkdir(exist_ok=True)
    return path
