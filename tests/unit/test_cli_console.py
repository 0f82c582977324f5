"""The command line's output: text printed as it is, and failed requests as one line."""

from __future__ import annotations

import httpx
import pytest
import typer

from hansa import cli_console
from hansa.client import HansaAPIError


@pytest.mark.parametrize(
    "text", ["Pricing [/x]", "[bold]not bold[/bold]", "pip install 'hansa[local]'", ":smile:"]
)
def test_text_is_printed_as_it_is(capsys: pytest.CaptureFixture[str], text: str) -> None:
    cli_console.say(text, "grey50")

    assert capsys.readouterr().out == text + "\n"


def test_a_refusal_is_one_line_and_a_401_says_how_to_pass_a_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(typer.Exit) as missing:
        with cli_console.server("http://h"):
            raise HansaAPIError(404, "not_found", "conversation [x] not found", {})
    with pytest.raises(typer.Exit) as keyless:
        with cli_console.server("http://h"):
            raise HansaAPIError(401, "unauthenticated", "this server needs an API key", {})
    out = capsys.readouterr().out.splitlines()

    assert missing.value.exit_code == keyless.value.exit_code == 1
    assert out[0] == "hansa: conversation [x] not found (not_found)"
    assert out[1].startswith("hansa: this server needs an API key (unauthenticated); ")
    assert "--key" in out[1] and "HANSA_API_KEY" in out[1]


def test_a_server_out_of_reach_says_to_start_it_or_give_its_url(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(typer.Exit) as down:
        with cli_console.server("http://127.0.0.1:9"):
            raise httpx.ConnectError("[Errno 111] Connection refused")
    with pytest.raises(typer.Exit):
        with cli_console.server("http://127.0.0.1:9"):
            raise httpx.ReadError("connection reset")
    refused, lost = capsys.readouterr().out.splitlines()

    assert down.value.exit_code == 1
    assert refused.startswith("hansa: cannot reach the Hansa server at http://127.0.0.1:9 (")
    assert "'hansa serve'" in refused and "--url" in refused
    assert lost.startswith("hansa: lost the Hansa server at http://127.0.0.1:9 (connection reset)")
