"""``tracing.configure``: an OTLP exporter only when an endpoint is configured."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = (
    "from opentelemetry import trace\n"
    "from hansa import tracing\n"
    "print(tracing.configure(), type(trace.get_tracer_provider()).__name__)\n"
)


def _configure(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env={**clean, **env}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_without_an_endpoint_nothing_is_installed() -> None:
    assert _configure() == "False ProxyTracerProvider"


def test_with_an_endpoint_the_sdk_exports_over_otlp() -> None:
    assert _configure(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:4318") == "True TracerProvider"
