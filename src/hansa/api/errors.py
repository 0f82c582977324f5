"""Errors in the shape of API.md, and the request body size limit."""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hansa import errors

log = logging.getLogger(__name__)


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"error": {"code", "message", "details"}}``."""
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _response(
    status: int, code: str, message: str, details: dict[str, Any] | None = None
) -> JSONResponse:
    return JSONResponse(error_body(code, message, details), status_code=status)


def install(app: FastAPI) -> None:
    """Register handlers that turn every failure into the API.md error shape."""

    @app.exception_handler(errors.UserError)
    async def _user_error(_: Request, exc: errors.UserError) -> JSONResponse:
        return _response(exc.status, exc.code, exc.message, exc.details)

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
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _response(exc.status_code, code, str(exc.detail))

    @app.exception_handler(errors.HansaError)
    async def _hansa(_: Request, exc: errors.HansaError) -> JSONResponse:
        log.error("request failed: %s", exc)
        return _response(500, exc.code, exc.message)


class _BodyTooLarge(Exception):
    pass


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` with 413, before any handler runs."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", ())).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._reject(send)
            return
        seen = 0
        exceeded = started = False

        async def limited_receive() -> Message:
            nonlocal seen, exceeded
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_bytes:
                    exceeded = True
                    raise _BodyTooLarge
            return msg

        async def guarded_send(msg: Message) -> None:
            nonlocal started
            if exceeded:  # whatever the app answers (frameworks wrap our exception), it is a 413
                if msg["type"] == "http.response.start" and not started:
                    started = True
                    await self._reject(send)
                return
            started = started or msg["type"] == "http.response.start"
            await send(msg)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except _BodyTooLarge:
            if not started:
                await self._reject(send)

    async def _reject(self, send: Send) -> None:
        body = json.dumps(
            error_body("body_too_large", f"the request body is larger than {self.max_bytes} bytes")
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})
