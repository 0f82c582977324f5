"""A response body decoded within a cap on the bytes it decompresses to.

Hansa asks every outside server for uncompressed bodies, but a server may compress anyway,
and 300 KB of gzip can hold 300 MiB: a cap on the bytes that arrive bounds nothing. So the
outbound transports (``outbound.py``'s and the MCP client's) decode bodies themselves, here,
asking zlib for no more than the room left under the cap, and fail with
``response_too_large`` past it; httpx then sees a plain body. An encoding other than gzip
or deflate is refused (``bad_response``) rather than handed to a decoder without a cap.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable

from hansa.tasks.base import TaskFailed

_PLAIN = ("", "identity")
_ZLIB = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class BoundedBody:
    """Decodes one response body chunk by chunk, at most ``limit`` bytes in all.

    Args:
        encoding: The response's ``Content-Encoding`` (None or empty: none).
        limit: The most bytes the decoded body may hold.
        source: Who answered, for the error (a host, a server's name).

    Raises:
        TaskFailed: ``bad_response`` for an encoding it cannot decode within a cap.
    """

    def __init__(self, encoding: str | None, limit: int, source: str) -> None:
        self.limit = limit
        self.source = source
        self.count = 0
        """Decoded bytes so far."""
        coding = (encoding or "").strip().lower()
        if coding not in _PLAIN and coding not in _ZLIB:
            raise TaskFailed(
                f"{source} answered with a body encoded as {coding!r}, which Hansa does not "
                "read (it asks for uncompressed bodies; gzip and deflate are read too)",
                code="bad_response",
            )
        self._coding = coding
        self._zlib = zlib.decompressobj(_ZLIB[coding]) if coding in _ZLIB else None
        self._raw_tried = False

    def feed(self, chunk: bytes) -> bytes:
        """The decoded bytes of ``chunk``; TaskFailed (``response_too_large``) past the cap."""
        if self._zlib is None:
            return self._counted(chunk)
        room = self.limit - self.count
        try:
            out = self._zlib.decompress(chunk, room + 1)
        except zlib.error as exc:
            if self._coding == "deflate" and self.count == 0 and not self._raw_tried:
                self._raw_tried = True
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, no header
                return self.feed(chunk)
            raise TaskFailed(
                f"{self.source} answered with a body that is not valid {self._coding}: {exc}",
                code="bad_response",
            ) from exc
        return self._counted(out)

    def flush(self) -> bytes:
        """What the decoder still holds at the end of the body."""
        if self._zlib is None:
            return b""
        return self._counted(self._zlib.flush(self.limit - self.count + 1))

    def _counted(self, data: bytes) -> bytes:
        self.count += len(data)
        if self.count > self.limit:
            raise TaskFailed(
                f"the response from {self.source} is larger than {self.limit} bytes "
                "(decompressed); HANSA_OUTBOUND_MAX_RESPONSE_BYTES sets the cap",
                code="response_too_large",
            )
        return data


def plain_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The raw headers of a response whose body is handed on decoded: without
    ``Content-Encoding`` and ``Content-Length`` (which counted the encoded bytes)."""
    return [(k, v) for k, v in headers if k.lower() not in (b"content-encoding", b"content-length")]


async def opened(
    encoding: str | None, limit: int, host: str, close: Callable[[], Awaitable[None]]
) -> BoundedBody:
    """The decoder of a response's body; a refused encoding closes the response first."""
    try:
        return BoundedBody(encoding, limit, host)
    except TaskFailed:
        await close()
        raise


async def decoded(raw: AsyncIterable[bytes], body: BoundedBody) -> AsyncIterator[bytes]:
    """The body as it arrives, decoded within the cap (both transports' streams yield it)."""
    async for chunk in raw:
        if data := body.feed(chunk):
            yield data
    if tail := body.flush():
        yield tail
