"""A Python client for Hansa's HTTP API: sync (:class:`Client`) and async (:class:`AsyncClient`).

It speaks only the public contract (docs/api.md): JSON in, JSON out, errors raised as
:class:`HansaAPIError` with the API's ``code``, ``message`` and ``details``. Event streams
are iterators that reconnect after a dropped connection and resume with ``Last-Event-ID``,
so no event is missed or seen twice.

    from hansa.client import Client

    with Client("http://127.0.0.1:8000", api_key="hk_…") as hansa:
        cid = hansa.create_conversation()["id"]
        posted = hansa.post_message(cid, "Create a Services page")
        for event in hansa.events(cid, after=posted["seq"] - 1, until_done=posted["turnId"]):
            print(event["type"], event["data"])

Answers are plain JSON (``dict``); :func:`parsed` reads one into the API's typed model, the
same models ``/openapi.json`` describes (:class:`RunCard`, :class:`TaskOut`,
:class:`ConversationOut`, :class:`MessageOut`, :class:`Posted`, :class:`RunSummary`, and
every event as :data:`Event`)::

    card = parsed(RunCard, hansa.run(run_id))
    print(card.status, [t.status for g in card.groups for t in g.tasks])
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx
from httpx_sse import aconnect_sse, connect_sse
from pydantic import BaseModel

from hansa.api.models.conversations import ConversationOut, MessageOut, Posted
from hansa.api.models.runs import RunCard, RunSummary, TaskOut
from hansa.domain.event import Event, payload_from_stored

Json = dict[str, Any]
M = TypeVar("M", bound=BaseModel)

__all__ = [
    "AsyncClient",
    "Client",
    "ConversationOut",
    "Event",
    "HansaAPIError",
    "MessageOut",
    "Posted",
    "RunCard",
    "RunSummary",
    "TaskOut",
    "parsed",
    "parsed_event",
]


def parsed(model: type[M], data: Json) -> M:
    """An answer of this client as the API's typed ``model`` (pydantic: ``ValidationError``
    when it does not fit)."""
    return model.model_validate(data)


def parsed_event(data: Json) -> Event:
    """An event of :meth:`Client.events` as the typed :class:`Event` (its ``payload`` one
    model per event type, its ``type`` the payload's)."""
    payload = payload_from_stored(str(data["type"]), dict(data["data"]))
    return Event.model_validate({**data, "payload": payload})


RECONNECT_SECONDS = 1.0
"""How long an event stream waits before it reconnects after its connection dropped."""
MAX_RECONNECTS = 30
"""Reconnections in a row (without an event between) before a stream gives up."""


class HansaAPIError(Exception):
    """An error answer of the API: its HTTP status and the API's error body."""

    def __init__(self, status: int, code: str, message: str, details: Json) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message, self.details = status, code, message, details


def _raise_for(response: httpx.Response) -> None:
    if response.is_success:
        return
    try:
        error = response.json()["error"]
        code, message, details = error["code"], error["message"], error.get("details") or {}
    except (ValueError, KeyError, TypeError):
        code, message, details = "http_error", response.text[:500], {}
    raise HansaAPIError(response.status_code, code, message, details)


def _json(response: httpx.Response) -> Any:
    _raise_for(response)
    return None if response.status_code == 204 or not response.content else response.json()


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _ends(event: Json, until_done: str | bool | None) -> bool:
    """Whether ``event`` ends a stream asked to stop at a turn's (or any) ``done``."""
    if until_done is None or event.get("type") != "done":
        return False
    return (
        until_done is True or event.get("turnId") == until_done or event.get("runId") == until_done
    )


class _Stream:
    """A conversation's event stream across reconnections: its cursor, when it ends, how
    many reconnections in a row it has made (the same for the sync and async clients)."""

    def __init__(self, conversation_id: str, after: int, until_done: str | bool | None) -> None:
        self.path = f"/api/conversations/{conversation_id}/events"
        self.cursor, self.until_done = after, until_done
        self.failures, self.done = 0, False

    def headers(self) -> dict[str, str]:
        return {"Last-Event-ID": str(self.cursor)}

    def take(self, data: str) -> Json | None:
        """The event in an SSE frame's data (None for a keep-alive), the cursor moved on."""
        if not data:
            return None
        event: Json = json.loads(data)
        self.cursor, self.failures = int(event["seq"]), 0
        self.done = _ends(event, self.until_done)
        return event

    def dropped(self, exc: httpx.TransportError) -> None:
        """The connection dropped: count it; ``exc`` is raised past ``MAX_RECONNECTS`` in a
        row."""
        self.failures += 1
        if self.failures > MAX_RECONNECTS:
            raise exc


def _run_body(conversation_id: str, title: str, tasks: list[Json]) -> Json:
    return {"conversationId": conversation_id, "title": title, "tasks": tasks}


class Client:
    """The API, one call at a time (``httpx.Client`` underneath)."""

    def __init__(
        self,
        base_url: str = "",
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        """``http``: send through this ``httpx.Client`` instead (its base URL, headers and
        transport; ``base_url``, ``api_key`` and ``timeout`` are then unused), which its
        owner closes."""
        self._owned = http is None
        self._http = http or httpx.Client(
            base_url=base_url, headers=_headers(api_key), timeout=timeout
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections (not those of an ``http`` client given to it)."""
        if self._owned:
            self._http.close()

    def request(self, method: str, path: str, body: Json | None = None, **params: Any) -> Any:
        """Any route: its JSON answer, or HansaAPIError."""
        query = {k: v for k, v in params.items() if v is not None}
        return _json(self._http.request(method, path, json=body, params=query))

    # identity and agents
    def me(self) -> Json:
        """Who the key is: ``{tenantId, principal}``."""
        return dict(self.request("GET", "/api/me"))

    def agents(self) -> list[Json]:
        """The tenant's agents."""
        return list(self.request("GET", "/api/agents"))

    # conversations
    def create_conversation(self, **body: Any) -> Json:
        """A new conversation (``projectId``, ``title``, ``activeAgentId`` optional)."""
        return dict(self.request("POST", "/api/conversations", body))

    def conversation(self, conversation_id: str) -> Json:
        """One conversation."""
        return dict(self.request("GET", f"/api/conversations/{conversation_id}"))

    def messages(self, conversation_id: str) -> list[Json]:
        """A conversation's messages, oldest first."""
        return list(self.request("GET", f"/api/conversations/{conversation_id}/messages"))

    def post_message(self, conversation_id: str, content: str, **extra: Any) -> Json:
        """Post a user message: ``{messageId, turnId, seq}``; its turn runs in the background."""
        path = f"/api/conversations/{conversation_id}/messages"
        return dict(self.request("POST", path, {"content": content, **extra}))

    def events(
        self, conversation_id: str, *, after: int = 0, until_done: str | bool | None = None
    ) -> Iterator[Json]:
        """The conversation's events after seq ``after``, live; ends after the ``done`` of
        turn or run ``until_done`` (``True``: the first ``done``), else runs until closed.
        A dropped connection is resumed with ``Last-Event-ID``."""
        stream = _Stream(conversation_id, after, until_done)
        while True:
            try:
                with connect_sse(
                    self._http, "GET", stream.path, headers=stream.headers(), timeout=None
                ) as sse:
                    if not sse.response.is_success:
                        sse.response.read()
                        _raise_for(sse.response)
                    for item in sse.iter_sse():
                        event = stream.take(item.data)
                        if event is not None:
                            yield event
                            if stream.done:
                                return
            except httpx.TransportError as exc:
                stream.dropped(exc)
                time.sleep(RECONNECT_SECONDS)

    # runs and tasks
    def create_run(self, conversation_id: str, title: str, tasks: list[Json]) -> Json:
        """A run awaiting approval, with its tasks."""
        return dict(self.request("POST", "/api/runs", _run_body(conversation_id, title, tasks)))

    def run(self, run_id: str) -> Json:
        """A run's card: its groups and tasks."""
        return dict(self.request("GET", f"/api/runs/{run_id}"))

    def runs(
        self, *, conversation_id: str | None = None, status: str | None = None, limit: int = 50
    ) -> list[Json]:
        """The tenant's runs, newest first (cards without their tasks)."""
        return list(
            self.request(
                "GET", "/api/runs", None, conversationId=conversation_id, status=status, limit=limit
            )
        )

    def approve(self, run_id: str) -> Json:
        """Approve a run (its first tasks start)."""
        return dict(self.request("POST", f"/api/runs/{run_id}/approve"))

    def control_run(self, run_id: str, action: str) -> Json:
        """``pause``, ``resume``, ``cancel`` or ``rollback`` a run."""
        return dict(self.request("POST", f"/api/runs/{run_id}/{action}"))

    def task(self, task_id: str) -> Json:
        """One task."""
        return dict(self.request("GET", f"/api/tasks/{task_id}"))

    def confirm(self, task_id: str, parameters_hash: str) -> Json:
        """Confirm an irreversible task, for exactly the parameters it was shown with."""
        body = {"parametersHash": parameters_hash}
        return dict(self.request("POST", f"/api/tasks/{task_id}/confirm", body))

    def wait_for_run(self, run_id: str, *, timeout: float = 300.0, every: float = 0.2) -> Json:
        """Poll a run until it is final (or waits on a person): its card."""
        deadline = time.monotonic() + timeout
        while True:
            card = self.run(run_id)
            if card["status"] not in ("running", "planning") or time.monotonic() > deadline:
                return card
            time.sleep(every)

    # agent sessions
    def start_session(self, agent_id: str, goal: str, **body: Any) -> Json:
        """Start an agent session (``maxSteps``, ``conversationId``… optional)."""
        payload = {"agentId": agent_id, "goal": goal, **body}
        return dict(self.request("POST", "/api/agent-sessions", payload))

    def session(self, session_id: str) -> Json:
        """One agent session."""
        return dict(self.request("GET", f"/api/agent-sessions/{session_id}"))

    def session_steps(self, session_id: str, after: int = 0) -> list[Json]:
        """A page of a session's steps after iteration ``after``."""
        return list(self.request("GET", f"/api/agent-sessions/{session_id}/steps", after=after))


class AsyncClient:
    """The same API for asyncio (``httpx.AsyncClient`` underneath)."""

    def __init__(
        self,
        base_url: str = "",
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        """``http``: as ``Client``'s."""
        self._owned = http is None
        self._http = http or httpx.AsyncClient(
            base_url=base_url, headers=_headers(api_key), timeout=timeout
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections (not those of an ``http`` client given to it)."""
        if self._owned:
            await self._http.aclose()

    async def request(self, method: str, path: str, body: Json | None = None, **params: Any) -> Any:
        """Any route: its JSON answer, or HansaAPIError."""
        query = {k: v for k, v in params.items() if v is not None}
        return _json(await self._http.request(method, path, json=body, params=query))

    async def create_conversation(self, **body: Any) -> Json:
        """A new conversation."""
        return dict(await self.request("POST", "/api/conversations", body))

    async def post_message(self, conversation_id: str, content: str, **extra: Any) -> Json:
        """Post a user message: ``{messageId, turnId, seq}``."""
        path = f"/api/conversations/{conversation_id}/messages"
        return dict(await self.request("POST", path, {"content": content, **extra}))

    async def events(
        self, conversation_id: str, *, after: int = 0, until_done: str | bool | None = None
    ) -> AsyncIterator[Json]:
        """As :meth:`Client.events`."""
        stream = _Stream(conversation_id, after, until_done)
        while True:
            try:
                async with aconnect_sse(
                    self._http, "GET", stream.path, headers=stream.headers(), timeout=None
                ) as sse:
                    if not sse.response.is_success:
                        await sse.response.aread()
                        _raise_for(sse.response)
                    async for item in sse.aiter_sse():
                        event = stream.take(item.data)
                        if event is not None:
                            yield event
                            if stream.done:
                                return
            except httpx.TransportError as exc:
                stream.dropped(exc)
                await asyncio.sleep(RECONNECT_SECONDS)

    async def create_run(self, conversation_id: str, title: str, tasks: list[Json]) -> Json:
        """A run awaiting approval."""
        body = _run_body(conversation_id, title, tasks)
        return dict(await self.request("POST", "/api/runs", body))

    async def run(self, run_id: str) -> Json:
        """A run's card."""
        return dict(await self.request("GET", f"/api/runs/{run_id}"))

    async def runs(
        self, *, conversation_id: str | None = None, status: str | None = None, limit: int = 50
    ) -> list[Json]:
        """The tenant's runs, newest first (cards without their tasks)."""
        return list(
            await self.request(
                "GET", "/api/runs", None, conversationId=conversation_id, status=status, limit=limit
            )
        )

    async def approve(self, run_id: str) -> Json:
        """Approve a run."""
        return dict(await self.request("POST", f"/api/runs/{run_id}/approve"))

    async def confirm(self, task_id: str, parameters_hash: str) -> Json:
        """Confirm an irreversible task."""
        body = {"parametersHash": parameters_hash}
        return dict(await self.request("POST", f"/api/tasks/{task_id}/confirm", body))
