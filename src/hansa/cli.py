"""The command line: ``hansa serve | migrate | agents | chat``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from httpx_sse import connect_sse
from rich.console import Console

from hansa import errors
from hansa.settings import Settings

app = typer.Typer(help="Hansa: multi-agent assistants that plan, act and show their work.")
console = Console(highlight=False)

DEFAULT_URL = "http://127.0.0.1:8000"
UrlOpt = Annotated[str, typer.Option("--url", help="The Hansa server.", envvar="HANSA_URL")]


def _settings(**flags: Any) -> Settings:
    given = {k: v for k, v in flags.items() if v is not None}
    try:
        return Settings(**given)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Interface to listen on.")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on.")] = None,
    database_url: Annotated[str | None, typer.Option(help="SQLite file or PostgreSQL URL.")] = None,
    model: Annotated[str | None, typer.Option(help="local, scripted[:file], openai:<m>.")] = None,
    config: Annotated[Path | None, typer.Option(help="A hansa.toml with agents/rules.")] = None,
    workers: Annotated[int | None, typer.Option(help="In-process workers (0 = HTTP only).")] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "warning",
) -> None:
    """Run the API, the panel and an in-process worker."""
    import uvicorn

    from hansa.api.app import create_app
    from hansa.engine.runtime.setup import build_model

    settings = _settings(
        host=host,
        port=port,
        database_url=database_url,
        model=model,
        config=config,
        workers=workers,
    )
    try:
        chosen = build_model(settings)
    except errors.ConfigError as exc:
        console.print(f"[red]hansa: {exc.message}[/red]")
        raise typer.Exit(2) from exc
    console.print(
        f"Hansa on http://{settings.host}:{settings.port} — model {settings.model}, "
        f"database {settings.database_url}"
    )
    uvicorn.run(
        create_app(settings, model=chosen),
        host=settings.host,
        port=settings.port,
        log_level=log_level,
        timeout_graceful_shutdown=5,
    )


@app.command()
def worker(
    database_url: Annotated[str | None, typer.Option(help="SQLite file or PostgreSQL URL.")] = None,
    model: Annotated[str | None, typer.Option(help="local, scripted[:file], openai:<m>.")] = None,
    config: Annotated[Path | None, typer.Option(help="A hansa.toml with agents/rules.")] = None,
) -> None:
    """Run a worker without HTTP: claims turns and tasks from the shared queue until stopped."""
    import signal

    from hansa.engine.running import running
    from hansa.engine.runtime.setup import build_model

    settings = _settings(database_url=database_url, model=model, config=config)
    try:
        chosen = build_model(settings)
    except errors.ConfigError as exc:
        console.print(f"[red]hansa: {exc.message}[/red]")
        raise typer.Exit(2) from exc

    async def go() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        async with running(settings, model=chosen, workers=1):
            console.print(f"hansa worker on {settings.database_url}")
            await stop.wait()

    asyncio.run(go())


@app.command()
def migrate(
    database_url: Annotated[str | None, typer.Option(help="SQLite file or PostgreSQL URL.")] = None,
) -> None:
    """Bring the database schema to the newest revision."""
    from hansa.store import migrate as migrations
    from hansa.store.db import Database

    settings = _settings(database_url=database_url)

    async def go() -> None:
        db = Database(settings.database_url)
        try:
            await migrations.migrate(db)
        finally:
            await db.dispose()

    asyncio.run(go())
    console.print(f"migrated {settings.database_url}")


@app.command()
def agents(url: UrlOpt = DEFAULT_URL) -> None:
    """List the agents of a running server."""
    for a in _get(url, "/api/agents"):
        console.print(
            f"[bold]{a['id']:<20}[/bold] {a['displayName']:<28} [dim]{a['roleSummary']}[/dim]",
            soft_wrap=True,
        )


@app.command()
def chat(
    message: Annotated[str, typer.Argument(help="What to ask.")],
    conversation: Annotated[str | None, typer.Option(help="Continue this conversation.")] = None,
    agent: Annotated[str | None, typer.Option(help="The active agent, e.g. growthLead.")] = None,
    url: UrlOpt = DEFAULT_URL,
) -> None:
    """Send a message and watch the turn live: thinking, status chips, text, done."""
    with httpx.Client(base_url=url, timeout=httpx.Timeout(10.0, read=None)) as client:
        if conversation is None:
            created = _ok(client.post("/api/conversations", json={"activeAgentId": agent}))
            conversation = str(created["id"])
            console.print(f"[dim]conversation {conversation}[/dim]")
        posted = _ok(
            client.post(
                f"/api/conversations/{conversation}/messages",
                json={"content": message, "activeAgentId": agent},
            )
        )
        _follow(client, conversation, posted["turnId"], posted["seq"])


CONTROL = {
    "approve": "/api/runs/{id}/approve",
    "pause": "/api/runs/{id}/pause",
    "resume": "/api/runs/{id}/resume",
    "cancel": "/api/runs/{id}/cancel",
    "preempt": "/api/tasks/{id}/preempt",
    "handoff": "/api/conversations/{id}/handoff",
}


@app.command()
def control(
    action: Annotated[
        str,
        typer.Argument(
            help="approve | pause | resume | cancel (a run), "
            "preempt (a task), handoff (a conversation)."
        ),
    ],
    target: Annotated[str, typer.Argument(help="The run, task or conversation id.")],
    url: UrlOpt = DEFAULT_URL,
) -> None:
    """Steer work in progress: pause or resume a run, cancel it, preempt a task, hand off."""
    if action not in CONTROL:
        raise typer.BadParameter(f"action must be one of {', '.join(CONTROL)}")
    with httpx.Client(base_url=url, timeout=30) as client:
        body = _ok(client.post(CONTROL[action].format(id=target)))
    console.print(f"{action}: {body.get('status') or body.get('state')}")


def _follow(client: httpx.Client, conversation: str, turn_id: str, after: int) -> None:
    names = {a["id"]: a["displayName"] for a in _ok(client.get("/api/agents"))}
    streaming = False
    path = f"/api/conversations/{conversation}/events"
    with connect_sse(client, "GET", path, params={"after": after}) as source:
        for sse in source.iter_sse():
            if not sse.data:  # a keep-alive comment
                continue
            ev = json.loads(sse.data)
            if ev["turnId"] != turn_id:
                continue
            data, kind = ev["data"], ev["type"]
            if kind == "text_delta":
                if not streaming:
                    console.print(
                        f"[bold]{names.get(ev['agentId'], ev['agentId'])}:[/bold] ", end=""
                    )
                    streaming = True
                console.print(data["delta"], end="", markup=False)
            elif kind == "thinking":
                console.print(f"[grey50]  · {data['summary']}[/grey50]")
            elif kind == "status":
                console.print(f"[black on bright_white] {data['text']} [/black on bright_white]")
            elif kind == "message" and data["author"] == "assistant":
                console.print() if streaming else console.print(data["content"], markup=False)
                streaming = False
            elif kind == "error":
                console.print(f"[red]{data['message']}[/red]")
            elif kind == "done":
                console.print(f"[dim]done ({data['status']})[/dim]")
                return


def _ok(response: httpx.Response) -> Any:
    if response.is_error:
        try:
            err = response.json()["error"]
            console.print(f"[red]hansa: {err['message']} ({err['code']})[/red]")
        except (ValueError, KeyError):
            console.print(f"[red]hansa: HTTP {response.status_code}[/red]")
        raise typer.Exit(1)
    return response.json()


def _get(url: str, path: str) -> Any:
    try:
        return _ok(httpx.get(url + path, timeout=10))
    except httpx.HTTPError as exc:
        console.print(f"[red]hansa: cannot reach {url}: {exc}[/red]")
        raise typer.Exit(1) from exc


def main() -> None:
    """Entry point of the ``hansa`` command."""
    app()


if __name__ == "__main__":
    main()
