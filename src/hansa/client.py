"""A Python client for Hansa's HTTP API: sync (:class:`Client`) and async (:class:`AsyncClient`).

It speaks only the public contract (docs/api.md): JSON in, the API's own answer models out
(the ones the routes return and ``/openapi.json`` describes), errors raised as
:class:`HansaAPIError` with the API's ``code``, ``message`` and ``details``. Event streams
are iterators that reconnect after a dropped connection and resume with ``Last-Event-ID``,
so no event is missed or seen twice.

    from hansa.client import Client

    with Client("http://127.0.0.1:8000", api_key="hk_…") as hansa:
        cid = hansa.create_conversation().id
        posted = hansa.post_message(cid, "Create a Services page")
        for event in hansa.events(cid, after=posted.seq - 1, until_done=posted.turn_id):
            print(event["type"], event["data"])

        card = hansa.run(run_id)
        print(card.status, [t.status for g in card.groups for t in g.tasks])

Answers are typed (:class:`ConversationOut`, :class:`MessageOut`, :class:`Posted`,
:class:`RunCard`, :class:`RunSummary`, :class:`TaskOut`, :class:`AgentOut`,
:class:`SessionOut`…) and can still be read by their wire names (``card["status"]``), as
when they were dicts. Events are the stream's JSON (a ``dict``); :func:`parsed_event` reads
one as the typed :data:`Event`; :meth:`Client.request` answers any route with its JSON.
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

from hansa.api.models.agents import AgentOut
from hansa.api.models.automation import SessionOut, SessionStepOut
from hansa.api.models.conversations import ConversationOut, MessageOut, Posted
from hansa.api.models.identity import Me
from hansa.api.models.runs import RunCard, RunSummary, TaskOut
from hansa.domain.event import Event, payload_from_stored

Json = dict[str, Any]
M = TypeVar("M", bound=BaseModel)

__all__ = [
    "AgentOut",
    "AsyncClient",
    "Client",
    "ConversationOut",
    "Event",
    "HansaAPIError",
    "Me",
    "MessageOut",
    "Posted",
    "RunCard",
    "RunSummary",
    "SessionOut",
    "SessionStepOut",
    "TaskOut",
    "parsed",
    "parsed_event",
]


def parsed(model: type[M], data: Any) -> M:
    """JSON (or an answer of this client, as it is) as the API's typed ``model`` (pydantic:
    ``ValidationError`` when it does not fit): for :meth:`Client.request`'s answers."""
    return model.model_validate(data)


def _many(model: type[M], data: Any) -> list[M]:
    return [model.model_validate(item) for item in data]


def parsed_event(data: Json) -> Event:
    """An event of :meth:`Client.events` as the typed :class:`Event` (its ``payload`` one
    model per event type, its ``type`` the payload's)."""
    payload = payload_from_stored(str(data["type"]), dict(data["data"]))
    return Event.model_validate({**data, "payload": payload})


_GOING = frozenset({"running", "planning"})
"""A run's statuses while it goes on by itself (``wait_for_run`` polls through them)."""
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
    def me(self) -> Me:
        """Who the key is: ``{tenantId, principal}``."""
        return Me.model_validate(self.request("GET", "/api/me"))

    def agents(self) -> list[AgentOut]:
        """The tenant's agents."""
        return _many(AgentOut, self.request("GET", "/api/agents"))

    # conversations
    def create_conversation(self, **body: Any) -> ConversationOut:
        """A new conversation (``projectId``, ``title``, ``activeAgentId`` optional)."""
        return ConversationOut.model_validate(self.request("POST", "/api/conversations", body))

    def conversation(self, conversation_id: str) -> ConversationOut:
        """One conversation."""
        path = f"/api/conversations/{conversation_id}"
        return ConversationOut.model_validate(self.request("GET", path))

    def messages(self, conversation_id: str) -> list[MessageOut]:
        """A conversation's messages, oldest first."""
        path = f"/api/conversations/{conversation_id}/messages"
        return _many(MessageOut, self.request("GET", path))

    def post_message(self, conversation_id: str, content: str, **extra: Any) -> Posted:
        """Post a user message: ``{messageId, turnId, seq}``; its turn runs in the background."""
        path = f"/api/conversations/{conversation_id}/messages"
        return Posted.model_validate(self.request("POST", path, {"content": content, **extra}))

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
    def create_run(self, conversation_id: str, title: str, tasks: list[Json]) -> RunCard:
        """A run awaiting approval, with its tasks."""
        body = _run_body(conversation_id, title, tasks)
        return RunCard.model_validate(self.request("POST", "/api/runs", body))

    def run(self, run_id: str) -> RunCard:
        """A run's card: its groups and tasks."""
        return RunCard.model_validate(self.request("GET", f"/api/runs/{run_id}"))

    def runs(
        self, *, conversation_id: str | None = None, status: str | None = None, limit: int = 50
    ) -> list[RunSummary]:
        """The tenant's runs, newest first (cards without their tasks)."""
        query = {"conversationId": conversation_id, "status": status, "limit": limit}
        return _many(RunSummary, self.request("GET", "/api/runs", None, **query))

    def approve(self, run_id: str) -> RunCard:
        """Approve a run (its first tasks start)."""
        return RunCard.model_validate(self.request("POST", f"/api/runs/{run_id}/approve"))

    def control_run(self, run_id: str, action: str) -> RunCard:
        """``pause``, ``resume``, ``cancel`` or ``rollback`` a run."""
        return RunCard.model_validate(self.request("POST", f"/api/runs/{run_id}/{action}"))

    def task(self, task_id: str) -> TaskOut:
        """One task."""
        return TaskOut.model_validate(self.request("GET", f"/api/tasks/{task_id}"))

    def confirm(self, task_id: str, parameters_hash: str) -> TaskOut:
        """Confirm an irreversible task, for exactly the parameters it was shown with."""
        body = {"parametersHash": parameters_hash}
        return TaskOut.model_validate(self.request("POST", f"/api/tasks/{task_id}/confirm", body))

    def wait_for_run(self, run_id: str, *, timeout: float = 300.0, every: float = 0.2) -> RunCard:
        """Poll a run until it is final (or waits on a person): its card."""
        deadline = time.monotonic() + timeout
        while True:
            card = self.run(run_id)
            if card.status not in _GOING or time.monotonic() > deadline:
                return card
            time.sleep(every)

    # agent sessions
    def start_session(self, agent_id: str, goal: str, **body: Any) -> SessionOut:
        """Start an agent session (``maxSteps``, ``conversationId``… optional)."""
        payload = {"agentId": agent_id, "goal": goal, **body}
        return SessionOut.model_validate(self.request("POST", "/api/agent-sessions", payload))

    def session(self, session_id: str) -> SessionOut:
        """One agent session."""
        return SessionOut.model_validate(self.request("GET", f"/api/agent-sessions/{session_id}"))

    def session_steps(self, session_id: str, after: int = 0) -> list[SessionStepOut]:
        """A page of a session's steps after iteration ``after``."""
        path = f"/api/agent-sessions/{session_id}/steps"
        return _many(SessionStepOut, self.request("GET", path, after=after))


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

    async def create_conversation(self, **body: Any) -> ConversationOut:
        """A new conversation."""
        found = await self.request("POST", "/api/conversations", body)
        return ConversationOut.model_validate(found)

    async def post_message(self, conversation_id: str, content: str, **extra: Any) -> Posted:
        """Post a user message: ``{messageId, turnId, seq}``."""
        path = f"/api/conversations/{conversation_id}/messages"
        return Posted.model_validate(
            await self.request("POST", path, {"content": content, **extra})
        )

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

    async def create_run(self, conversation_id: str, title: str, tasks: list[Json]) -> RunCard:
        """A run awaiting approval."""
        body = _run_body(conversation_id, title, tasks)
        return RunCard.model_validate(await self.request("POST", "/api/runs", body))

    async def run(self, run_id: str) -> RunCard:
        """A run's card."""
        return RunCard.model_validate(await self.request("GET", f"/api/runs/{run_id}"))

    async def runs(
        self, *, conversation_id: str | None = None, status: str | None = None, limit: int = 50
    ) -> list[RunSummary]:
        """The tenant's runs, newest first (cards without their tasks)."""
        query = {"conversationId": conversation_id, "status": status, "limit": limit}
        return _many(RunSummary, await self.request("GET", "/api/runs", None, **query))

    async def approve(self, run_id: str) -> RunCard:
        """Approve a run."""
        return RunCard.model_validate(await self.request("POST", f"/api/runs/{run_id}/approve"))

    async def confirm(self, task_id: str, parameters_hash: str) -> TaskOut:
        """Confirm an irreversible task."""
        body = {"parametersHash": parameters_hash}
        found = await self.request("POST", f"/api/tasks/{task_id}/confirm", body)
        return TaskOut.model_validate(found)
