"""What the command line prints, and how a command that talks to a server fails.

Text from the server, a model, a user or an operator is printed as it is, never read as
Rich markup: a page titled ``Pricing [/x]`` is shown, not parsed (``say``). A request that
fails ends the command with one line that says what to do, and exit status 1: a server
that cannot be reached (start it, or point ``--url`` at it), an API error with its code,
and for a 401 how to pass a key (``server``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import httpx
import typer
from rich.console import Console
from rich.text import Text

from hansa.client import HansaAPIError

console = Console(highlight=False)

DEFAULT_URL = "http://127.0.0.1:8000"
UrlOpt = Annotated[str, typer.Option("--url", help="The Hansa server.", envvar="HANSA_URL")]
KeyOpt = Annotated[
    str | None,
    typer.Option("--key", help="An API key (none needed in local mode).", envvar="HANSA_API_KEY"),
]

KEY_FIX = "; from the command line, pass the key with --key <key> or set HANSA_API_KEY"
"""What a 401 adds: how the command line sends a key."""


def say(text: str, style: str = "", *, end: str = "\n") -> None:
    """Print ``text`` as it is (no markup, no emoji codes), in ``style``."""
    console.print(Text(text, style=style), end=end, soft_wrap=True)


def failed(message: str, status: int = 1) -> typer.Exit:
    """Print ``hansa: <message>`` in red; the exit to raise."""
    say(f"hansa: {message}", "red")
    return typer.Exit(status)


def refused(error: HansaAPIError) -> typer.Exit:
    """An API error as one line: its message and code, and for a 401 how to pass a key."""
    return failed(f"{error.message} ({error.code}){KEY_FIX if error.status == 401 else ''}")


@contextmanager
def server(url: str) -> Iterator[None]:
    """Requests to the server at ``url`` inside: an API error or a connection that fails
    ends the command with one line and exit status 1, not a traceback."""
    try:
        yield
    except HansaAPIError as exc:
        raise refused(exc) from exc
    except httpx.HTTPError as exc:
        reason = str(exc) or type(exc).__name__
        what = "cannot reach" if isinstance(exc, httpx.ConnectError) else "lost"
        raise failed(
            f"{what} the Hansa server at {url} ({reason}): start it with 'hansa serve', "
            "or give its address with --url (or HANSA_URL)"
        ) from exc
