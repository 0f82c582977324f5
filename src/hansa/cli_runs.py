"""``hansa runs list | show | approve | cancel``, and following a run live to its end.

A run is followed on its conversation's event stream: each task's status as it changes,
with the run's progress ("[2/4]"), run and task ids, a prompt to confirm an irreversible
step (when the terminal can answer), and Hans's summary once the run's ``done`` comes.
``--json`` prints the API's JSON instead, for scripts.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from hansa.cli_console import DEFAULT_URL, KeyOpt, UrlOpt, say, server
from hansa.client import Client, RunCard

runs_app = typer.Typer(help="Runs: list them, show one, approve or cancel it, follow it.")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the API's JSON.")]
FINAL = ("completed", "failed", "cancelled", "skipped", "undone")


def _client(url: str, key: str | None) -> Client:
    return Client(url, api_key=key, timeout=30.0)


@runs_app.command("list")
def list_runs(
    conversation: Annotated[str | None, typer.Option(help="Only this conversation's.")] = None,
    status: Annotated[str | None, typer.Option(help="Only runs in this status.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=100)] = 20,
    as_json: JsonOpt = False,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
) -> None:
    """The runs, newest first."""
    with server(url), _client(url, key) as client:
        found = client.runs(conversation_id=conversation, status=status, limit=limit)
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json", by_alias=True) for r in found], indent=2))
        return
    for r in found:
        say(f"{r['id']}  {r['status']:<18} {r['title']}")


@runs_app.command("show")
def show_run(
    run_id: Annotated[str, typer.Argument(help="The run's id.")],
    as_json: JsonOpt = False,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
) -> None:
    """A run's card: its tasks by group, with their ids and statuses."""
    with server(url), _client(url, key) as client:
        card = client.run(run_id)
    if as_json:
        typer.echo(card.model_dump_json(by_alias=True, indent=2))
        return
    _print_card(card)


def _print_card(card: RunCard) -> None:
    tasks = [t for g in card["groups"] for t in g["tasks"]]
    done = sum(t["status"] in FINAL for t in tasks)
    say(f"run {card['id']}: {card['title']}")
    say(f"  {card['status']} [{done}/{len(tasks)}]")
    for group in card["groups"]:
        say(f"  group {group['stepGroup']}")
        for t in group["tasks"]:
            say(f"    {t['id']}  {t['status']:<22} {t['summary']}")


@runs_app.command("approve")
def approve_run(
    run_id: Annotated[str, typer.Argument(help="The run's id.")],
    follow: Annotated[bool, typer.Option(help="Follow the run to its end.")] = True,
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
) -> None:
    """Approve a run awaiting approval; then follow it to Hans's summary."""
    with server(url), _client(url, key) as client:
        card = client.run(run_id)
        after = client.conversation(card["conversationId"])["lastSeq"]
        client.approve(run_id)
        say(f"approved: run {run_id}")
        if follow:
            follow_run(client, card["conversationId"], run_id, after)


@runs_app.command("cancel")
def cancel_run(
    run_id: Annotated[str, typer.Argument(help="The run's id.")],
    url: UrlOpt = DEFAULT_URL,
    key: KeyOpt = None,
) -> None:
    """Cancel a run (what waits is cancelled; what runs finishes and is set aside)."""
    with server(url), _client(url, key) as client:
        card = client.control_run(run_id, "cancel")
    say(f"cancel: {card['status']}")


def follow_run(client: Client, conversation_id: str, run_id: str, after: int) -> None:
    """Print run ``run_id``'s progress from seq ``after``, before its approval, until its
    ``done``: the progress counts the tasks' statuses as the events since then set them
    (every task was open when the run was approved), not as the card shows them now."""
    tasks = {t["id"]: t for g in client.run(run_id)["groups"] for t in g["tasks"]}
    status = dict.fromkeys(tasks, "open")
    for ev in client.events(conversation_id, after=after, until_done=run_id):
        if ev.get("runId") != run_id:
            continue
        data, kind = ev["data"], ev["type"]
        if kind == "task_status" and ev.get("taskId") in tasks:
            tid = ev["taskId"]
            status[tid] = data["status"]
            done = sum(s in FINAL for s in status.values())
            say(f"  [{done}/{len(status)}] {tasks[tid]['summary']}: {data['status']} ({tid})")
            if data["status"] == "awaiting_confirmation":
                _confirm(client, tid)
        elif kind == "status":
            say(f"  · {data['text']}")
        elif kind == "message" and data["author"] == "assistant":
            say(data["content"])
        elif kind == "done":
            say(f"run {run_id} done ({data['status']})", "dim")


def _confirm(client: Client, task_id: str) -> None:
    """Ask for an irreversible step's confirmation when someone can answer; else say how."""
    task = client.task(task_id)
    how = f"hansa control or POST /api/tasks/{task_id}/confirm {{parametersHash}}"
    if not sys.stdin.isatty():
        say(f"  it cannot be undone: confirm it with {how}")
        return
    if typer.confirm(f"  {task['summary']} cannot be undone. Confirm it?", default=False):
        client.confirm(task_id, task["parametersHash"])
