"""The command line: ``hansa serve | worker | migrate | keys | agents | chat | control | runs``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.text import Text
from sqlalchemy import Connection

from hansa import errors
from hansa.cli_console import DEFAULT_URL, KeyOpt, UrlOpt, console, failed, say, server
from hansa.cli_runs import follow_run, runs_app
from hansa.client import Client, Posted
from hansa.settings import Settings

T = TypeVar("T")

app = typer.Typer(help="Hansa: multi-agent assistants that plan, act and show their work.")
app.add_typer(runs_app, name="runs")

DbOpt = Annotated[str | None, typer.Option(help="SQLite file or PostgreSQL URL.")]
LogFormatOpt = Annotated[
    str | None, typer.Option(help="Log lines: text (readable, the default) or json.")
]
LogLevelOpt = Annotated[
    str | None, typer.Option(help="debug, info (the default: with the access log), warning.")
]


def _version(shown: bool) -> None:
    if shown:
        import hansa

        typer.echo(f"hansa {hansa.__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Hansa: multi-agent assistants that plan, act and show their work."""


def _settings(**flags: Any) -> Settings:
    given = {k: v for k, v in flags.items() if v is not None}
    try:
        return Settings(**given)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc


def _shown(database_url: str) -> str:
    """The database URL as printed: its password never is."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(database_url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(an unreadable database URL)"


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Interface to listen on.")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on.")] = None,
    database_url: Annotated[str | None, typer.Option(help="SQLite file or PostgreSQL URL.")] = None,
    model: Annotated[str | None, typer.Option(help="local, scripted[:file], openai:<m>.")] = None,
    config: Annotated[Path | None, typer.Option(help="A hansa.toml with agents/rules.")] = None,
    workers: Annotated[int | None, typer.Option(help="In-process workers (0 = HTTP only).")] = None,
    log_format: LogFormatOpt = None,
    log_level: LogLevelOpt = None,
) -> None:
    """Run the API, the panel and an in-process worker."""
    import uvicorn

    from hansa import logs, tracing
    from hansa.api.app import create_app
    from hansa.engine.runtime.setup import build_model

    settings = _settings(
        host=host,
        port=port,
        database_url=database_url,
        model=model,
        config=config,
        workers=workers,
        log_format=log_format,
        log_level=log_level,
    )
    logs.configure(settings.log_format, settings.log_level)
    tracing.configure()
    try:
        chosen = build_model(settings)
    except errors.ConfigError as exc:
        raise failed(exc.message, 2) from exc  # "pip install 'hansa[local]'" stays whole
    _refuse_open_network(settings)
    where = f"http://{settings.host}:{settings.port}"
    banner = f"Hansa on {where} — model {settings.model}, database {_shown(settings.database_url)}"
    if settings.log_format == "json":  # one JSON object per line, this one too
        logging.getLogger("hansa.cli").info(banner, extra={"url": where, "model": settings.model})
    else:
        say(banner)
    uvicorn.run(
        create_app(settings, model=chosen),
        host=settings.host,
        port=settings.port,
        log_config=None,  # logs.configure did it: uvicorn's lines go through the same handler
        log_level=settings.log_level,
        access_log=False,  # api/access.py writes the access log, with request ids
        timeout_graceful_shutdown=5,
        ws_max_size=settings.max_body_bytes,  # a WebSocket frame is a body too
    )


@app.command()
def worker(
    database_url: Annotated[str | None, typer.Option(help="SQLite file or PostgreSQL URL.")] = None,
    model: Annotated[str | None, typer.Option(help="local, scripted[:file], openai:<m>.")] = None,
    config: Annotated[Path | None, typer.Option(help="A hansa.toml with agents/rules.")] = None,
    log_format: LogFormatOpt = None,
    log_level: LogLevelOpt = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=65535,
            help="Serve this worker's Prometheus metrics (its jobs, tasks, model calls) on "
            "this port, at /metrics.",
        ),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option(help="The address the metrics port listens on.")
    ] = "127.0.0.1",
) -> None:
    """Run a worker without HTTP: claims turns and tasks from the shared queue until stopped."""
    import signal

    from prometheus_client import start_http_server

    from hansa import logs, tracing
    from hansa.engine.running import running
    from hansa.engine.runtime.setup import build_model

    settings = _settings(
        database_url=database_url,
        model=model,
        config=config,
        log_format=log_format,
        log_level=log_level,
    )
    logs.configure(settings.log_format, settings.log_level)
    tracing.configure()
    try:
        chosen = build_model(settings)
    except errors.ConfigError as exc:
        raise failed(exc.message, 2) from exc

    async def go() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        async with running(settings, model=chosen, workers=1) as services:
            exporter = None
            if metrics_port is not None:  # the queue's depth is the API's /metrics to tell
                registry = services.metrics.registry
                exporter, _ = start_http_server(metrics_port, metrics_host, registry=registry)
            say(f"hansa worker on {_shown(settings.database_url)}")
            try:
                await stop.wait()
            finally:
                if exporter is not None:
                    exporter.shutdown()

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
        db = Database(
            settings.database_url,
            lock_timeout_seconds=settings.db_lock_timeout_seconds,
            idle_in_transaction_seconds=settings.db_idle_in_transaction_seconds,
        )
        try:
            await migrations.migrate(db)
        finally:
            await db.dispose()

    asyncio.run(go())
    say(f"migrated {_shown(settings.database_url)}")


def _refuse_open_network(settings: Settings) -> None:
    """Beyond loopback, every request needs a key: refuse to start before one exists."""
    from hansa.api.auth import is_loopback
    from hansa.store import keys

    if is_loopback(settings.host) or _on_database(settings.database_url, keys.any_active):
        return
    say(
        f"hansa: refusing to listen on {settings.host} without an API key: anyone who "
        "can reach the port could use Hansa. Create one first (with the same "
        "--database-url), then send it as Authorization: Bearer <key>:",
        "red",
    )
    say("  hansa keys create --tenant default --role admin")
    raise typer.Exit(2)


def _on_database(database_url: str | None, fn: Callable[[Connection], T]) -> T:
    """Migrate the database, then run ``fn`` in one transaction on it."""
    from hansa.store import migrate as migrations
    from hansa.store.db import Database

    settings = _settings(database_url=database_url)

    async def go() -> T:
        db = Database(
            settings.database_url,
            lock_timeout_seconds=settings.db_lock_timeout_seconds,
            idle_in_transaction_seconds=settings.db_idle_in_transaction_seconds,
        )
        try:
            await migrations.migrate(db)
            return await db.write(fn)
        finally:
            await db.dispose()

    return asyncio.run(go())


keys_app = typer.Typer(
    help="API keys, on the database directly: create, list, revoke, reset-local."
)
app.add_typer(keys_app, name="keys")


@keys_app.command("create")
def keys_create(
    tenant: Annotated[str, typer.Option(help="The tenant (created with its first key).")],
    role: Annotated[str, typer.Option(help="admin or member.")],
    name: Annotated[str, typer.Option(help="What the key is for.")] = "",
    database_url: DbOpt = None,
) -> None:
    """Create a key; it is printed once, as the last line, and stored only as a hash."""
    import re

    from hansa.domain.base import new_id, utcnow
    from hansa.domain.principal import TENANT_ID_PATTERN, Role
    from hansa.store import keys

    if not re.fullmatch(TENANT_ID_PATTERN, tenant):
        raise typer.BadParameter("letters, digits, _ . - (at most 36)", param_hint="--tenant")
    if role not in (Role.ADMIN, Role.MEMBER):
        raise typer.BadParameter("admin or member", param_hint="--role")
    key, secret = _on_database(
        database_url,
        lambda conn: keys.issue(conn, tenant, Role(role), name, utcnow(), key_id=new_id()),
    )
    say(f"created {role} key {key.id} for tenant {tenant}; it is shown only now:")
    typer.echo(secret)


@keys_app.command("list")
def keys_list(
    tenant: Annotated[str | None, typer.Option(help="Only this tenant's keys.")] = None,
    database_url: DbOpt = None,
) -> None:
    """List keys (never their secrets), revoked ones marked."""
    from hansa.store import keys

    for k in _on_database(database_url, lambda conn: keys.list_for(conn, tenant)):
        state = f"revoked {k.revoked_at:%Y-%m-%d %H:%M}" if k.revoked_at else "live"
        agent = f" agent={k.agent_id}" if k.agent_id else ""
        say(f"{k.id}  {k.tenant_id:<16} {k.role.value:<6} {k.hint:<11} {state:<22}{agent} {k.name}")


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (from hansa keys list).")],
    database_url: DbOpt = None,
) -> None:
    """Revoke a key at once: requests with it get 401."""
    from hansa.domain.base import utcnow
    from hansa.store import keys

    try:
        key = _on_database(database_url, lambda conn: keys.revoke(conn, None, key_id, utcnow()))
    except errors.NotFound as exc:
        raise failed(exc.message) from exc
    say(f"revoked {key.id} ({key.role.value}, tenant {key.tenant_id})")


@keys_app.command("reset-local")
def keys_reset_local(database_url: DbOpt = None) -> None:
    """Return a loopback server to local mode (no key needed): forget every revoked key.

    Once a key has existed, revoking every key does not reopen the server; only this
    does, and only when no key is live.
    """
    from hansa.store import keys

    try:
        forgotten = _on_database(database_url, keys.reset_local)
    except errors.Conflict as exc:
        raise failed(exc.message) from exc
    say(
        f"forgot {forgotten} revoked keys: on loopback, requests without a key are the "
        "local admin again"
    )


@app.command()
def agents(url: UrlOpt = DEFAULT_URL, key: KeyOpt = None) -> None:
    """List the agents of a running server."""
    with server(url), Client(url, api_key=key, timeout=10.0) as hansa:
        roster = hansa.agents()
    for a in roster:
        line = Text.assemble(
            (f"{a['id']:<20}", "bold"), f" {a['displayName']:<28} ", (a["roleSummary"], "dim")
        )
        console.print(line, soft_wrap=True)


@app.command()
def chat(
    message: Annotated[str, typer.Argument(help="What to ask.")],
    conversation: Annotated[str | None, typer.Option(help="Continue this conversation.")] = None,
    agent: Annotated[str | None, typer.Option(help="The active agent, e.g. growthLead.")] = None,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
) -> None:
    """Send a message and watch the turn live: thinking, status chips, text, done."""
    with server(url), Client(url, api_key=key, timeout=30.0) as hansa:
        if conversation is None:
            conversation = hansa.create_conversation(activeAgentId=agent)["id"]
            say(f"conversation {conversation}", "dim")
        posted = hansa.post_message(conversation, message, activeAgentId=agent)
        started = _follow(hansa, conversation, posted)
        if started is not None:  # the chat approved a run: follow it to Hans's summary
            say(f"run {started} started", "dim")
            follow_run(hansa, conversation, started, posted["seq"])


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
    key: KeyOpt = None,
) -> None:
    """Steer work in progress: pause or resume a run, cancel it, preempt a task, hand off."""
    if action not in CONTROL:
        raise typer.BadParameter(f"action must be one of {', '.join(CONTROL)}")
    with server(url), Client(url, api_key=key, timeout=30.0) as hansa:
        body = hansa.request("POST", CONTROL[action].format(id=target))
    say(f"{action}: {body.get('status') or body.get('state')}")


def _follow(hansa: Client, conversation: str, posted: Posted) -> str | None:
    """Print the turn live; the id of a run it started (an approval in the chat), if any."""
    names = {a["id"]: a["displayName"] for a in hansa.agents()}
    turn_id = posted["turnId"]
    streaming = False  # the answer's text is being streamed on the current line
    streamed: set[str] = set()  # messages whose text came as deltas
    started: str | None = None
    said: set[str] = set()

    def line(text: str, style: str = "") -> None:
        nonlocal streaming
        if streaming:  # a line of its own, not glued to the streamed text
            console.print()
            streaming = False
        say(text, style)

    for ev in hansa.events(conversation, after=posted["seq"], until_done=turn_id):
        if ev["turnId"] != turn_id:
            continue
        data, kind = ev["data"], ev["type"]
        if kind == "text_delta":
            if not streaming:
                say(f"{names.get(ev['agentId'], ev['agentId'])}: ", "bold", end="")
                streaming = True
            say(data["delta"], end="")
            streamed.add(data["messageId"])
        elif kind == "draft_superseded":  # the quality gate held that text back
            line("  · the draft above is withdrawn", "grey50")
        elif kind == "thinking":
            line(f"  · {data['summary']}", "grey50")
        elif kind == "status":
            line(f" {data['text']} ", "black on bright_white")
        elif kind == "message" and data["author"] == "assistant":
            if data["messageId"] not in streamed:
                line(data["content"])
            elif streaming:  # its text is on the line: end it
                console.print()
                streaming = False
            said.add(data["content"])
        elif kind == "error" and data["message"] in said:  # said once: its code is enough
            line(f"  · failed ({data['code']})", "red")
        elif kind == "error":
            line(data["message"], "red")
        elif kind == "plan":
            run_id = data["runId"]
            line(
                f"  plan: run {run_id}, awaiting approval (say “yes, proceed”, or "
                f"hansa runs approve {run_id})",
                "dim",
            )
        elif kind == "run_status" and data["status"] == "running" and ev.get("runId"):
            started = ev["runId"]
        elif kind == "done":
            line(f"done ({data['status']})", "dim")
    return started


def main() -> None:
    """Entry point of the ``hansa`` command."""
    app()


if __name__ == "__main__":
    main()
