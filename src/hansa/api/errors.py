"""Errors in the shape of API.md, and the limits on request bodies: size, JSON depth, NUL."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from typing import Any

import psycopg
import sqlalchemy as sa
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketState

from hansa import errors
from hansa.store import outage

log = logging.getLogger(__name__)
_LOG_OUTAGE = outage.Throttle()


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"error": {"code", "message", "details"}}``."""
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _response(
    status: int, code: str, message: str, details: dict[str, Any] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(code, message, details), status_code=status)


def install(app: FastAPI) -> None:
    """Register handlers that turn every failure into the API.md error shape."""
    app.state.outages = outage.Recent()

    @app.exception_handler(errors.UserError)
    async def _user_error(conn: Request, exc: errors.UserError) -> JSONResponse | None:
        if isinstance(conn, WebSocket):  # a WebSocket route's dependency or handler refused
            await refuse_websocket(conn, exc)
            return None
        response = _response(exc.status, exc.code, exc.message, exc.details)
        if isinstance(exc, errors.RateLimited):
            response.headers["Retry-After"] = str(exc.retry_after)
        return response

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = exc.errors()
        if any(p.get("type") == "json_invalid" for p in problems):
            return _response(422, "malformed_json", "the request body is not valid JSON")
        fields = [
            {"field": ".".join(str(x) for x in p.get("loc", ())[1:]), "problem": p.get("msg")}
            for p in problems
        ]
        first = fields[0] if fields else {"field": "", "problem": "invalid"}
        message = f"{first['field'] or 'body'}: {first['problem']}"
        return _response(422, "validation_error", message, {"errors": fields})

    @app.exception_handler(StarletteHTTPException)
    async def _http(conn: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        response = _response(exc.status_code, code, str(exc.detail))
        response.headers.update(exc.headers or {})
        if exc.status_code == 405:  # every method of the path, not only its first route's
            response.headers["Allow"] = ", ".join(sorted(_methods_of(conn)))
        return response

    # store/direct.py runs SQLite's and psycopg's statements itself: their errors come raw
    @app.exception_handler(sqlite3.Error)
    @app.exception_handler(psycopg.Error)
    @app.exception_handler(sa.exc.SQLAlchemyError)
    async def _database(conn: Request, exc: Exception) -> JSONResponse:
        answer = unavailable(exc, outages(conn.app))
        if answer is not None:
            return answer
        log.error("request failed", exc_info=exc)
        return _response(500, "internal_error", "the server failed to answer this request")

    @app.exception_handler(errors.HansaError)
    async def _hansa(_: Request, exc: errors.HansaError) -> JSONResponse:
        log.error("request failed: %s", exc)
        return _response(500, exc.code, exc.message)

    @app.exception_handler(Exception)
    async def _unexpected(conn: Request, exc: Exception) -> JSONResponse:
        # also what a middleware raised (the guard reads keys): an outage there is a 503 too;
        # Starlette logs the traceback after this answer; the caller learns nothing internal
        answer = unavailable(exc, outages(conn.app))
        if answer is not None:
            return answer
        return _response(500, "internal_error", "the server failed to answer this request")


def _methods_of(conn: Request) -> set[str]:
    """The methods the app's routes take at the request's path."""
    methods: set[str] = set()
    for route in conn.app.router.routes:
        taken = getattr(route, "methods", None)
        if taken and route.matches(conn.scope)[0] is not Match.NONE:
            methods |= taken
    return methods


def unavailable(exc: BaseException, recent: outage.Recent | None = None) -> JSONResponse | None:
    """503 ``database_unavailable`` with ``Retry-After`` when ``exc`` is an outage (noted
    in ``recent``, which ``/readyz`` reads)."""
    reason = outage.outage(exc)
    if reason is None:
        return None
    if recent is not None:
        recent.note(reason)
    if _LOG_OUTAGE(reason):
        log.warning("answering 503: %s (%s)", outage.describe(reason), exc.__class__.__name__)
    return outage_answer(reason)


def outages(app: Any) -> outage.Recent:
    """The app's record of the last outage (``install`` made it)."""
    recent: outage.Recent = app.state.outages
    return recent


def outage_answer(reason: outage.Reason) -> JSONResponse:
    """503 ``database_unavailable`` for ``reason``, with ``Retry-After``."""
    response = _response(
        503,
        "database_unavailable",
        f"{outage.describe(reason)}; try again later",
        {"reason": reason},
    )
    response.headers["Retry-After"] = str(outage.RETRY_AFTER_SECONDS)
    return response


class Refused(Exception):
    """A request refused before any handler runs, with its status and API error code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class BodyLimit:
    """Refuse, before any handler runs: bodies over ``max_bytes`` (413), JSON bodies that
    nest deeper than ``max_depth`` (400 ``json_too_deep``), and NUL characters, which
    PostgreSQL cannot store, in a JSON body, the path or the query (400 ``nul_character``).
    """

    def __init__(self, app: ASGIApp, max_bytes: int, max_depth: int = 32) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", ()))
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._reject(send, _too_large(self.max_bytes))
            return
        if "\x00" in scope["path"] or b"%00" in scope.get("query_string", b""):
            await self._reject(send, Refused(400, "nul_character", _NUL_MESSAGE))
            return
        is_json = _is_json(headers.get(b"content-type"))
        chunks: list[bytes] = []
        seen = 0
        refused: Refused | None = None
        started = False

        async def limited_receive() -> Message:
            nonlocal seen, refused
            msg = await receive()
            if msg["type"] == "http.request":
                chunk = msg.get("body", b"")
                seen += len(chunk)
                if seen > self.max_bytes:
                    refused = _too_large(self.max_bytes)
                    raise refused
                if is_json:
                    chunks.append(chunk)
                    if not msg.get("more_body"):
                        refused = json_problem(b"".join(chunks), self.max_depth)
                        chunks.clear()
                        if refused is not None:
                            raise refused
            return msg

        async def guarded_send(msg: Message) -> None:
            nonlocal started
            if refused is not None:  # whatever the app answers (frameworks wrap our
                if msg["type"] == "http.response.start" and not started:  # exception)
                    started = True
                    await self._reject(send, refused)
                return
            started = started or msg["type"] == "http.response.start"
            await send(msg)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Refused as exc:
            if not started:
                await self._reject(send, exc)

    async def _reject(self, send: Send, refused: Refused) -> None:
        body = json.dumps(error_body(refused.code, refused.message)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": refused.status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _too_large(max_bytes: int) -> Refused:
    return Refused(413, "body_too_large", f"the request body is larger than {max_bytes} bytes")


def _is_json(content_type: bytes | None) -> bool:
    # FastAPI reads a body without a content type as JSON too
    return content_type is None or b"json" in content_type.lower()


_NUL_MESSAGE = "NUL characters (\\u0000) are not accepted"
_STRING = re.compile(rb'"[^"\\]*+(?:\\(?:.|\Z)[^"\\]*+)*+(?:"|\Z)', re.S)
"""A JSON string; one left open runs to the end (so no quote is scanned twice)."""
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NUL_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*+\\u0000")
"""``\\u0000`` after an even number of backslashes: an escape, not a quoted backslash."""


def json_problem(body: bytes, max_depth: int) -> Refused | None:
    """Why a JSON text is refused before parsing (too deep, a NUL character), or None.

    Runs at C speed whatever the text (a JSON body or a WebSocket frame), so that
    checking cannot itself stall the event loop. Brackets that can never balance are
    refused as malformed here; other malformed JSON is left to the parser.
    """
    if b"\x00" in body or (b"\\u0000" in body and _NUL_ESCAPE.search(body)):
        return Refused(400, "nul_character", _NUL_MESSAGE)
    if body.count(b"[") + body.count(b"{") <= max_depth:
        return None
    # strings out, braces as brackets (a mismatch is the parser's to report), the rest out
    brackets = _STRING.sub(b"", body).translate(_AS_BRACKETS, _NOT_BRACKET)
    if re.search(b"\\[{%d}" % (max_depth + 1), brackets) is None:  # no straight descent
        for _ in range(max_depth):  # each pass removes the innermost level of nesting
            shorter = brackets.replace(b"[]", b"")
            if len(shorter) == len(brackets):
                break
            brackets = shorter
        if not brackets:
            return None
        if b"[]" not in brackets:  # JSON would have reduced to nothing
            return Refused(422, "malformed_json", "the request body is not valid JSON")
    return Refused(
        400, "json_too_deep", f"JSON may nest arrays and objects at most {max_depth} deep"
    )


async def refuse(scope: Scope, receive: Receive, send: Send, exc: errors.UserError) -> None:
    """Answer ``exc`` in the API error shape before any route runs: an HTTP response, or
    for a WebSocket its handshake's (a close code ``4000 + status`` where the server
    cannot answer a handshake with a response)."""
    body = json.dumps(error_body(exc.code, exc.message, exc.details)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if exc.status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="hansa"'))
    if isinstance(exc, errors.RateLimited):
        headers.append((b"retry-after", str(exc.retry_after).encode()))
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": exc.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    await receive()  # websocket.connect
    if "websocket.http.response" in scope.get("extensions", {}):
        start = {"type": "websocket.http.response.start", "status": exc.status, "headers": headers}
        await send(start)
        await send({"type": "websocket.http.response.body", "body": body})
        return
    await send({"type": "websocket.close", "code": 4000 + exc.status, "reason": exc.message[:120]})


async def refuse_websocket(websocket: WebSocket, exc: errors.UserError) -> None:
    """``refuse`` for a WebSocket route: its handshake answered in the API error shape, or,
    once the socket is open, a close with code ``4000 + status`` and the message."""
    if websocket.application_state is WebSocketState.CONNECTING:
        await refuse(websocket.scope, websocket.receive, websocket.send, exc)
    elif websocket.application_state is WebSocketState.CONNECTED:
        await websocket.close(code=4000 + exc.status, reason=exc.message[:120])
