"""The floor of a turn on this machine: a minimal Starlette + SQLite server doing a turn's
storage and streaming work, and nothing else (no routing, laws, context, model, limits).

It answers the three requests bench/turn_latency.py makes, as Hansa does:

- ``POST /api/conversations`` -> ``{"id"}``;
- ``POST /api/conversations/{id}/messages`` -> ``{"turnId"}``: the user message, its
  event, the turn and its job in one transaction; the turn then runs as a task;
- ``GET /api/conversations/{id}/events``: SSE, one chunk per commit, each event read back
  from SQLite after a notice (as Hansa's followers do).

A turn writes Hansa's three event transactions of a plain turn (the user message; the
session, routing and four thinking entries; a text delta, a thinking entry, the answer,
context usage and ``done``), with events of Hansa's sizes, the job claimed and finished in
transactions of their own. SQLite on the event loop's thread, WAL, ``synchronous=NORMAL``,
as Hansa's store. What Hansa spends above this is what its turn does besides storing and
streaming.

    python bench/turn_floor.py --port 8800 --db /tmp/floor.db
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import uvicorn
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS conversations (id TEXT PRIMARY KEY, last_seq INTEGER, "
    "status TEXT, created_at TEXT)",
    "CREATE TABLE IF NOT EXISTS messages (id TEXT PRIMARY KEY, conversation_id TEXT, "
    "kind TEXT, content TEXT, created_at TEXT)",
    "CREATE TABLE IF NOT EXISTS events (conversation_id TEXT, seq INTEGER, type TEXT, "
    "turn_id TEXT, data TEXT, created_at TEXT, PRIMARY KEY (conversation_id, seq))",
    "CREATE TABLE IF NOT EXISTS turns (id TEXT PRIMARY KEY, conversation_id TEXT, "
    "status TEXT, created_at TEXT)",
    "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, kind TEXT, payload TEXT, "
    "status TEXT, lease_until TEXT)",
)
THINKING = "Hans routed this to Dana (Growth Lead): the message names SEO. " * 2
ANSWER = "Here is what I would do first for your SEO: " + "check titles and links. " * 6


class Floor:
    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=10000"):
            self.db.execute(f"PRAGMA {pragma}")
        for statement in SCHEMA:
            self.db.execute(statement)
        self.notices: dict[str, asyncio.Condition] = defaultdict(asyncio.Condition)
        self.last: dict[str, int] = defaultdict(int)
        """Each conversation's last committed seq: a follower waits only when it has it."""
        self.tasks: set[asyncio.Task[None]] = set()

    def _now(self) -> str:
        return datetime.now(UTC).isoformat()

    async def commit(self, conversation_id: str, turn_id: str, events: list[tuple]) -> None:
        """Append ``events`` (type, data) in one transaction and notify the followers."""
        db, now = self.db, self._now()
        db.execute("BEGIN IMMEDIATE")
        (last,) = db.execute(
            "SELECT last_seq FROM conversations WHERE id = ?", (conversation_id,)
        ).fetchone()
        rows = [
            (conversation_id, last + i + 1, kind, turn_id, json.dumps(data), now)
            for i, (kind, data) in enumerate(events)
        ]
        db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", rows)
        db.execute(
            "UPDATE conversations SET last_seq = ? WHERE id = ?",
            (last + len(events), conversation_id),
        )
        db.execute("COMMIT")
        self.last[conversation_id] = last + len(events)
        notice = self.notices[conversation_id]
        async with notice:
            notice.notify_all()

    def _job(self, statement: str, *args: str) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute(statement, args)
        self.db.execute("COMMIT")

    async def turn(self, conversation_id: str, turn_id: str, job_id: str) -> None:
        await asyncio.sleep(0)
        self._job("UPDATE jobs SET status = 'running', lease_until = ? WHERE id = ?", "x", job_id)
        await self.commit(
            conversation_id,
            turn_id,
            [
                ("session", {"turnId": turn_id, "agentId": "hans"}),
                ("routing", {"agentId": "dana", "reason": THINKING}),
                *[("thinking", {"text": THINKING, "phase": "context"}) for _ in range(4)],
            ],
        )
        message_id = uuid.uuid4().hex
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute(
            "INSERT INTO messages VALUES (?, ?, 'assistant', ?, ?)",
            (message_id, conversation_id, ANSWER, self._now()),
        )
        self.db.execute("UPDATE turns SET status = 'completed' WHERE id = ?", (turn_id,))
        self.db.execute("UPDATE jobs SET status = 'done' WHERE id = ?", (job_id,))
        self.db.execute("COMMIT")
        await self.commit(
            conversation_id,
            turn_id,
            [
                ("text_delta", {"messageId": message_id, "text": ANSWER}),
                ("thinking", {"text": THINKING, "phase": "validation"}),
                ("message", {"id": message_id, "content": ANSWER, "kind": "assistant"}),
                ("context_usage", {"window": 8192, "used": 900, "sections": {"system": 200}}),
                ("done", {"turnId": turn_id}),
            ],
        )

    async def conversations(self, request: Request) -> JSONResponse:
        cid = uuid.uuid4().hex
        self._job("INSERT INTO conversations VALUES (?, 0, 'idle', ?)", cid, self._now())
        return JSONResponse({"id": cid}, status_code=201)

    async def messages(self, request: Request) -> JSONResponse:
        cid = request.path_params["cid"]
        body = await request.json()
        turn_id, message_id, job_id = (uuid.uuid4().hex for _ in range(3))
        db, now = self.db, self._now()
        db.execute("BEGIN IMMEDIATE")
        db.execute(
            "INSERT INTO messages VALUES (?, ?, 'user', ?, ?)",
            (message_id, cid, body["content"], now),
        )
        db.execute("INSERT INTO turns VALUES (?, ?, 'queued', ?)", (turn_id, cid, now))
        db.execute(
            "INSERT INTO jobs VALUES (?, 'turn', ?, 'queued', NULL)",
            (job_id, json.dumps({"turnId": turn_id})),
        )
        db.execute("COMMIT")
        await self.commit(cid, turn_id, [("message", {"id": message_id, **body})])
        task = asyncio.create_task(self.turn(cid, turn_id, job_id))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return JSONResponse({"turnId": turn_id, "messageId": message_id}, status_code=202)

    async def events(self, request: Request) -> EventSourceResponse:
        cid = request.path_params["cid"]

        async def frames() -> AsyncIterator[bytes]:
            seen = 0
            notice = self.notices[cid]
            while True:
                rows = self.db.execute(
                    "SELECT seq, type, turn_id, data FROM events WHERE conversation_id = ? "
                    "AND seq > ? ORDER BY seq",
                    (cid, seen),
                ).fetchall()
                if rows:
                    seen = rows[-1][0]
                    chunk = []
                    for seq, kind, turn_id, data in rows:
                        wire = {
                            "seq": seq,
                            "type": kind,
                            "turnId": turn_id,
                            "data": json.loads(data),
                        }
                        frame = ServerSentEvent(json.dumps(wire), event=kind, id=str(seq))
                        chunk.append(frame.encode())
                    yield b"".join(chunk)
                    continue
                async with notice:
                    if self.last[cid] <= seen:
                        await notice.wait()

        return EventSourceResponse(frames(), ping=15, send_timeout=30)


def app(path: str) -> Starlette:
    floor = Floor(path)
    return Starlette(
        routes=[
            Route("/healthz", lambda r: JSONResponse({"status": "ok"})),
            Route("/api/conversations", floor.conversations, methods=["POST"]),
            Route("/api/conversations/{cid}/messages", floor.messages, methods=["POST"]),
            Route("/api/conversations/{cid}/events", floor.events),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db", required=True)
    args = parser.parse_args()
    uvicorn.run(app(args.db), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
