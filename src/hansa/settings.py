"""One Settings object, read from the environment (``HANSA_*``) and flags at start-up."""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

MAX_TOOL_ROUNDS = 6
"""Rounds of tool calls one reply may make by default (``HANSA_MAX_TOOL_ROUNDS``)."""


class Settings(BaseSettings):
    """Everything Hansa can be told; built once and passed down, never read again from env."""

    model_config = SettingsConfigDict(env_prefix="HANSA_", frozen=True, extra="ignore")

    database_url: str = "sqlite:///./.hansa/hansa.db"
    """SQLite file by default; ``postgresql://…`` for a shared engine."""
    model: str = "local"
    """``local`` (embedded SmolLM2), ``scripted[:script.json]``, ``openai:<model>`` or
    ``anthropic:<model>``."""
    config: Path | None = None
    """A ``hansa.toml`` overriding agents and routing rules, and naming the operator's stdio
    MCP servers (``[mcp_servers.<name>]``: the only processes a project may start)."""
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    openai_base_url: str | None = None
    """An OpenAI-compatible endpoint; a local server there may run without a key."""
    openai_api_key: str | None = Field(
        default=None, validation_alias=AliasChoices("HANSA_OPENAI_API_KEY", "OPENAI_API_KEY")
    )
    """``HANSA_OPENAI_API_KEY``, else the standard ``OPENAI_API_KEY``."""
    anthropic_base_url: str | None = None
    anthropic_api_key: str | None = Field(
        default=None,
        validation_alias=AliasChoices("HANSA_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
    )
    """``HANSA_ANTHROPIC_API_KEY``, else the standard ``ANTHROPIC_API_KEY``."""
    local_model_path: str | None = None
    local_cache_reuse: bool = True
    """The embedded model keeps evaluated tokens that moved in the prompt (decision 0045);
    off, it reuses only the prompt's unchanged beginning (exact, slower)."""
    outbound_allow: str = ""
    """Comma-separated ``host:port`` targets that connectors and webhooks may reach on private
    networks; credentials may go to them over plain http, and a GET webhook to one needs no
    confirmation."""
    outbound_max_response_bytes: int = Field(default=1024 * 1024, ge=1024, le=1024**3)
    """The largest response any outside system's answer may decompress to (webhooks,
    ``service.call``, WordPress, WooCommerce, MCP servers over HTTP); past it the call fails
    with ``response_too_large``."""
    cors_origins: Annotated[tuple[str, ...], NoDecode] = ()
    """Origins (``https://app.example.com``, ``http://localhost:3000``) whose pages may call
    Hansa from a browser (CORS), comma-separated or a JSON list; none by default. Their
    preflights are answered before authentication, their pages may read the answers and send
    the panel's cookie, and local mode takes their writes as its own page's
    (docs/security.md, "Browser apps on other origins"). ``*`` is refused: every site could
    then read a local-mode server."""
    secret_key: SecretStr | None = None
    """Fernet keys sealing stored secrets (connector passwords, credential headers); several,
    comma-separated, to rotate: the first seals, all open. Make one with ``python -c "from
    cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"``."""

    log_format: Literal["text", "json"] = "text"
    """Log lines on stderr: ``text`` (readable) or ``json`` (one object per line)."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """The least severe log line written; ``info`` includes the access log."""

    workers: int = Field(default=1, ge=0, le=1)
    """In-process workers of ``hansa serve`` (0: HTTP only; run ``hansa worker`` elsewhere)."""
    startup_retry_seconds: float = Field(default=60.0, ge=0, le=3600)
    """How long start-up keeps retrying an unreachable database (it may be restarting)."""
    crash_at: str | None = None
    """Fault injection for tests: the named crash point ends the process on the spot."""
    stop_at: str | None = None
    """Fault injection for tests: the named stop point freezes the process (SIGSTOP)."""
    worker_concurrency: int = Field(default=64, ge=1, le=1024)
    """Turns and other jobs one worker runs at once (runs have slots of their own)."""
    worker_run_concurrency: int = Field(default=256, ge=1, le=4096)
    """Runs one worker drives at once; a run's job mostly waits for its tasks."""
    lease_seconds: float = Field(default=10.0, gt=0, le=600)
    """How long a claimed job is a worker's without a heartbeat (the database's clock)."""
    poll_seconds: float = Field(default=0.5, gt=0, le=60)
    """How often a worker looks for jobs it was not told about."""
    follow_poll_seconds: float = Field(default=1.0, gt=0, le=60)
    """How often a live stream re-reads its conversation's log when no notice rang it: a
    notice lost between processes delays an event by at most this long."""
    db_lock_timeout_seconds: float = Field(default=5.0, gt=0, le=600)
    """PostgreSQL: how long a write waits for a row lock before it gives up (503)."""
    db_idle_in_transaction_seconds: float = Field(default=5.0, gt=0, le=600)
    """PostgreSQL: a session idle this long inside a transaction (its process frozen) is
    ended and its locks released; keep it below ``lease_seconds``."""
    clock_skew_seconds: float = Field(default=0.0, ge=-86_400, le=86_400)
    """Fault injection for tests: this process's clock runs this far off (leases and due
    times are the database's, so a skewed worker neither steals nor loses jobs)."""
    drop_notices: bool = False
    """Fault injection for tests: ignore every notice from other processes."""

    delta_flush_ms: int = Field(default=50, ge=1, le=5000)
    """Streamed text is written (a ``text_delta``) once its oldest part is this old: a
    transaction per 50 ms of a stream at most, whatever the model's speed."""
    delta_flush_chars: int = Field(default=2048, ge=1, le=65536)
    """... or once this much text waits, whichever comes first. It bounds what a fast
    model's burst holds back; at 64 a model that streams faster than 1,300 characters a
    second (the scripted one, a fast hosted one) cost a transaction, an SSE frame per
    subscriber and a follower's read per 64 characters (issue 29)."""
    history_messages: int = Field(default=12, ge=0, le=200)
    """The newest user/assistant messages that stay word for word when older ones are
    folded into the rolling summary (prompts hold the summary and every message after it)."""
    summary_after_messages: int = Field(default=24, ge=0, le=1000)
    """Messages after the summary past which the older ones are summarized (0: never by
    count); keep it above ``history_messages``."""
    summary_after_chars: int = Field(default=5_000, ge=0)
    """Characters of the messages after the summary past which it is brought up to date
    (0: never by characters)."""
    summary_after_tokens: int = Field(default=0, ge=0)
    """Estimated tokens (characters / 4) of the messages after the summary past which it is
    brought up to date (0: only when the prompt's history did not fit its budget)."""
    summary_fold_share: float = Field(default=0.5, gt=0, le=1)
    """The share of each budget (characters, tokens, the prompt's history) the messages kept
    word for word may take after a summary: folding well below the budget that triggered it
    makes the summary rare (folding just under it, it ran after every turn, issue 34)."""
    summary_before_share: float = Field(default=0.8, gt=0, le=1)
    """The share of the prompt's history budget past which a turn queues the summary before
    the history overflows: it runs while the history still fits, and no turn in between
    evaluates a prompt whose cut moved (keep it above ``summary_fold_share``)."""
    summary_paste_chars: int = Field(default=2_000, ge=0)
    """A user's message this long or longer is a pasted document: the rolling summary keeps
    the newest one word for word and folds the other history first (seed 002 §5.3; 0: no
    message is)."""
    prompt_max_messages: int = Field(default=200, ge=1, le=2000)
    """The most messages after the summary a prompt reads; older ones wait for the summary
    (and ``context_usage`` names them as dropped meanwhile)."""
    context_cache_entries: int = Field(default=512, ge=0, le=100_000)
    """The most project digests and tenant overviews the context packs keep in memory (the
    least recently used go first; 0: none kept, every turn reads them)."""
    context_cache_seconds: float = Field(default=30.0, ge=0, le=3600)
    """How long a cached digest is used: this process drops it at once when a change of its
    project commits here, so this bounds only how late another process's change is seen."""
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    max_message_chars: int = Field(default=20_000, ge=1)
    chat_timeout_seconds: float = Field(default=300.0, gt=0)
    """How long ``POST /api/assistant/chat`` waits for its turn to finish."""
    sse_keepalive_seconds: float = Field(default=15.0, gt=0)

    # Limits (docs/security.md, "Limits"): each answers in the API error shape.
    max_json_depth: int = Field(default=32, ge=2, le=256)
    """How deeply a JSON body (or WebSocket frame) may nest arrays and objects (400)."""
    max_project_context_bytes: int = Field(default=32 * 1024, ge=256)
    """The largest ``projectContext`` a message may carry, as JSON (422)."""
    max_queued_turns: int = Field(default=100, ge=1, le=10_000)
    """Unfinished turns one conversation may have; one more message gets 429 (room for a
    script that seeds a conversation with many messages at once)."""
    max_subscribers_per_conversation: int = Field(default=20, ge=1)
    """Live SSE and WebSocket streams one conversation may have in this process (429)."""
    max_subscribers_per_tenant: int = Field(default=1000, ge=1)
    """Live SSE and WebSocket streams one tenant may have in this process (429)."""
    ws_send_timeout_seconds: float = Field(default=30.0, gt=0)
    """A WebSocket client that takes longer to accept one frame is disconnected."""
    rate_limit_per_minute: int = Field(default=600, ge=0)
    """Requests to ``/api``, ``/ap``, ``/v1``, ``/ag-ui`` and ``/mcp`` one key (or, without
    one, one address) may make per minute, in bursts of up to as many; 0 turns the limit off.
    Local mode (no keys) is exempt."""
    max_waits_per_principal: int = Field(default=10, ge=1, le=10_000)
    """Requests that wait for work (chat, execute, ``/mcp``, ``/v1`` and ``/ag-ui`` turns, the
    Agent Protocol's waits, joins and streams) one key may have open at once (429)."""
    execute_timeout_seconds: float = Field(default=120.0, gt=0)
    """How long ``POST /api/assistant/execute`` waits for its task before answering 202
    with the task id to follow."""
    idempotency_abandoned_seconds: float = Field(default=600.0, gt=0)
    """A reserved ``Idempotency-Key`` whose request has not answered for this long is
    taken to be abandoned (its process died) and may be used again."""
    idempotency_ttl_seconds: float = Field(default=24 * 3600.0, gt=0)
    """How long an ``Idempotency-Key``'s answer is kept for replays."""
    task_concurrency: int = Field(default=4, ge=1, le=64)
    """Tasks of one step group that run at once; also the tool calls of one agent-loop round."""
    max_tool_rounds: int = Field(default=MAX_TOOL_ROUNDS, ge=0, le=50)
    """Rounds of tool calls one reply may make (the agent loop); a model that still asks for
    tools after them ends the turn with ``tool_loop_limit``. 0 offers agents no tools."""
    task_timeout_seconds: float = Field(default=300.0, gt=0)
    model_call_attempts: int = Field(default=3, ge=1, le=10)
    """Attempts of a model call that fails transiently (a timeout, no connection, 429, 5xx,
    overloaded) before nothing streamed; each attempt is an ``llm_calls`` row
    (``engine/llm.py``, ``Retry``)."""
    model_call_backoff_seconds: float = Field(default=1.0, ge=0, le=60)
    """The wait after a model call's first failed attempt; it doubles after each one (a
    provider's ``Retry-After`` is waited instead when longer, up to
    ``HANSA_MODEL_CALL_MAX_BACKOFF_SECONDS``)."""
    model_call_max_backoff_seconds: float = Field(default=30.0, ge=0, le=600)
    """The longest wait between two attempts of a model call."""
    task_max_attempts: int = Field(default=3, ge=1, le=10)
    """Attempts of a reversible task that fails with a retryable error."""
    max_tasks_per_run: int = Field(default=50, ge=1, le=500)
    quality_evaluator: Literal["off", "model"] = "off"
    """The quality gate's evaluator (``engine/quality_gate.py``): ``model`` also asks the
    supervisor's model (purpose ``evaluate``) whether each answer may go out; ``off`` runs
    the deterministic checks only."""
    claim_window_ms: int = Field(default=500, ge=0, le=10_000)
    """How long external assistants may claim a message (seed 001 turn-taking)."""

    ap_store_max_bytes_per_tenant: int = Field(default=64 * 1024 * 1024, ge=64 * 1024)
    """Bytes of values (as compact JSON) one tenant may keep in the Agent Protocol's store
    (``/ap/store``); a put past it is 422 and stores nothing."""

    # Schedules and completion webhooks (docs/api.md, "Schedules", "Completion webhooks").
    max_schedules_per_tenant: int = Field(default=100, ge=0, le=100_000)
    """Schedules one tenant may have; one more is refused (422)."""
    schedule_min_interval_seconds: float = Field(default=60.0, ge=1, le=86_400)
    """The shortest time a schedule's cron may leave between two firings (422 otherwise)."""
    max_webhooks_per_tenant: int = Field(default=20, ge=0, le=10_000)
    """Completion webhooks one tenant may have; one more is refused (422)."""
    max_services_per_tenant: int = Field(default=50, ge=0, le=10_000)
    """Named outbound services (``/api/services``) one tenant may have; one more is 422."""
    webhook_max_attempts: int = Field(default=5, ge=1, le=20)
    """Attempts to deliver one event to a webhook before its delivery fails for good."""
    webhook_backoff_seconds: float = Field(default=10.0, gt=0, le=3600)
    """The wait after a delivery's first failed attempt; it doubles after each one."""
    webhook_timeout_seconds: float = Field(default=10.0, gt=0, le=120)
    """How long one delivery attempt may take, redirects included."""

    # Rules, templates and agent sessions (docs/security.md, "Limits"; issue 28).
    max_rules_per_tenant: int = Field(default=200, ge=0, le=10_000)
    """Rules one tenant may have; one more is refused (422)."""
    max_rule_words: int = Field(default=500, ge=1, le=2_000)
    """Words one ``words`` condition of a rule may list (422 past it); any ``words`` list (a
    graph's too) past 20,000 characters is never compiled: it evaluates as ``timedOut``."""
    max_rule_words_chars: int = Field(default=10_000, ge=1, le=20_000)
    """Characters one ``words`` list may hold in all (422 past it): compiling holds the GIL."""
    rule_evaluation_budget_ms: int = Field(default=250, ge=10, le=10_000)
    """How long the pattern tests of one evaluation (a trigger's rules, a graph's condition)
    may take in all, off the event loop; the tests past it are ``timedOut``, not matches."""
    max_node_params_bytes: int = Field(default=256 * 1024, ge=1024, le=64 * 1024 * 1024)
    """The most a node's parameters may hold once their templates are filled (compact JSON);
    past it the node fails (``template_too_large``) and nothing is stored."""
    max_conversation_context_bytes: int = Field(default=1024 * 1024, ge=1024)
    """The most a conversation's context may hold (compact JSON); a ``context.update`` past it
    fails and changes nothing."""
    max_conversation_user_bytes: int = Field(default=8 * 1024, ge=256, le=1024 * 1024)
    """The most a conversation's ``user`` may hold (compact JSON); more is 422 ``user``."""
    max_conversation_user_keys: int = Field(default=50, ge=1, le=1_000)
    """The most keys a conversation's ``user`` may have (``id`` included); more is 422."""
    max_sessions_per_tenant: int = Field(default=10, ge=0, le=10_000)
    """Running (and paused) agent sessions one tenant may have; one more is 429."""
    session_steps_per_minute_per_tenant: int = Field(default=120, ge=1, le=100_000)
    """Agent session steps one tenant may take in a minute; past it the next step waits."""
    session_default_every_seconds: float = Field(default=1.0, ge=0, le=86_400)
    """The pause between two steps of a session that sets no ``everySeconds``."""

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _origins(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else text.split(",")
        if not isinstance(value, list | tuple):
            return value
        return tuple(dict.fromkeys(_origin(str(v)) for v in value if str(v).strip()))

    @field_validator("secret_key")
    @classmethod
    def _fernet_keys(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        keys = [k.strip() for k in value.get_secret_value().split(",") if k.strip()]
        for n, key in enumerate(keys, 1):
            try:
                ok = len(base64.urlsafe_b64decode(key.encode())) == 32
            except (binascii.Error, ValueError):
                ok = False
            if not ok:
                raise ValueError(
                    f"HANSA_SECRET_KEY: key {n} is not a Fernet key (urlsafe base64 of 32 bytes)"
                )
        return value if keys else None

    def secret_keys(self) -> str | None:
        """``HANSA_SECRET_KEY`` in clear, for the store's ``SecretBox`` only."""
        return None if self.secret_key is None else self.secret_key.get_secret_value()


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(text: str) -> str:
    """``text`` as a browser sends it in ``Origin``: ``scheme://host[:port]``, lower case,
    without a default port or a path."""
    given = text.strip()
    if given in ("*", "null"):
        raise ValueError(
            f"HANSA_CORS_ORIGINS: {given!r} is not allowed; list each origin "
            "(https://app.example.com)"
        )
    parts = urlsplit(given.rstrip("/"))
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path:
        raise ValueError(
            f"HANSA_CORS_ORIGINS: {given!r} is not an origin: scheme://host[:port], "
            "http or https, without a path"
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"HANSA_CORS_ORIGINS: {given!r} is not an origin: no query or user")
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"HANSA_CORS_ORIGINS: {given!r} has an invalid port") from exc
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    shown = "" if port in (None, _DEFAULT_PORTS[parts.scheme]) else f":{port}"
    return f"{parts.scheme}://{host}{shown}"
