"""``bounded.BoundedBody``: a body is decoded within its cap whatever its encoding says."""

from __future__ import annotations

import gzip
import zlib

import pytest

from hansa.tasks.base import TaskFailed
from hansa.tasks.connectors.bounded import BoundedBody, plain_headers


def _read(body: BoundedBody, data: bytes, chunk: int = 1000) -> bytes:
    out = b"".join(body.feed(data[i : i + chunk]) for i in range(0, len(data), chunk))
    return out + body.flush()


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        (None, lambda b: b),
        ("identity", lambda b: b),
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b, wbits=-zlib.MAX_WBITS)),  # raw, as some send
    ],
)
def test_a_body_within_the_cap_is_decoded(encoding: str | None, encode) -> None:  # type: ignore[no-untyped-def]
    data = b"x" * 5000
    assert _read(BoundedBody(encoding, 5000, "h"), encode(data)) == data


def test_a_bomb_stops_at_the_cap_without_decompressing_it_all() -> None:
    bomb = gzip.compress(b"\0" * (50 * 1024 * 1024))
    body = BoundedBody("gzip", 1024 * 1024, "bomb.example")
    with pytest.raises(TaskFailed) as failed:
        _read(body, bomb, chunk=65536)
    assert failed.value.code == "response_too_large"
    assert "bomb.example" in failed.value.message and "decompressed" in failed.value.message
    assert body.count <= 1024 * 1024 + 1


@pytest.mark.parametrize("encoding", ["br", "zstd", "gzip, gzip"])
def test_an_encoding_it_cannot_bound_is_refused(encoding: str) -> None:
    with pytest.raises(TaskFailed) as failed:
        BoundedBody(encoding, 100, "h")
    assert failed.value.code == "bad_response"


def test_broken_gzip_is_a_clear_failure() -> None:
    with pytest.raises(TaskFailed) as failed:
        _read(BoundedBody("gzip", 100, "h"), b"not gzip at all")
    assert failed.value.code == "bad_response"


def test_the_decoded_body_loses_its_encoding_headers() -> None:
    raw = [(b"Content-Encoding", b"gzip"), (b"content-length", b"9"), (b"X-A", b"1")]
    assert plain_headers(raw) == [(b"X-A", b"1")]
