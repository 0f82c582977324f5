"""The schema, in SQLAlchemy Core. Migrations in ``migrations/`` create exactly this."""

from __future__ import annotations

import sqlalchemy as sa

from hansa.store.types import BigId, Json, JsonOrNull, UtcDateTime

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
    }
)


def _id(name: str = "id") -> sa.Column[str]:
    return sa.Column(name, sa.String(36), primary_key=True)


def _tenant() -> sa.Column[str]:
    return sa.Column("tenant_id", sa.String(36), sa.ForeignKey("tenants.id"), nullable=False)


def _created() -> sa.Column[sa.DateTime]:
    return sa.Column("created_at", UtcDateTime(), nullable=False)


tenants = sa.Table(
    "tenants",
    metadata,
    _id(),
    sa.Column("name", sa.String(200), nullable=False),
    _created(),
)

projects = sa.Table(
    "projects",
    metadata,
    _id(),
    _tenant(),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("domain", sa.String(253)),
    sa.Column("cms_platform", sa.String(64)),
    sa.Column("allowed_task_types", Json),
    sa.Column("config", Json, nullable=False),
    _created(),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
    sa.Index("ix_projects_tenant", "tenant_id", "created_at"),
)

assistant_conversations = sa.Table(
    "assistant_conversations",
    metadata,
    _id(),
    _tenant(),
    sa.Column("project_id", sa.String(36), sa.ForeignKey("projects.id")),
    sa.Column("user_id", sa.String(36)),
    sa.Column("title", sa.String(200)),
    sa.Column("state", sa.String(32), nullable=False),
    sa.Column("current_agent", sa.String(64), nullable=False),
    sa.Column("last_seq", sa.Integer, nullable=False),
    sa.Column("active_flag", sa.Boolean, nullable=False),
    _created(),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
    sa.Column("closed_at", UtcDateTime()),
    sa.Column("metadata", Json, nullable=False),
    sa.Column("client_id", sa.String(36)),  # the client's own id for it (a UUID), if it chose one
    sa.Column("user", JsonOrNull),  # who it is with: {id, displayName?, email?, …}; null: nobody
    sa.Index("ix_conversations_tenant", "tenant_id", "created_at"),
    sa.Index("ix_conversations_tenant_client", "tenant_id", "client_id", unique=True),
)

assistant_messages = sa.Table(
    "assistant_messages",
    metadata,
    _id(),
    _tenant(),
    sa.Column(
        "conversation_id",
        sa.String(36),
        sa.ForeignKey("assistant_conversations.id"),
        nullable=False,
    ),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("turn_id", sa.String(36)),
    sa.Column("run_id", sa.String(36)),
    sa.Column("author", sa.String(16), nullable=False),
    sa.Column("agent_id", sa.String(64)),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("content", sa.Text, nullable=False),
    _created(),
    sa.Column("metadata", Json, nullable=False),
    sa.Index("ix_messages_conversation", "conversation_id", "seq"),
    sa.Index("ix_messages_run", "run_id", "seq"),
)

assistant_agent_definitions = sa.Table(
    "assistant_agent_definitions",
    metadata,
    _id(),
    sa.Column("tenant_id", sa.String(36), sa.ForeignKey("tenants.id")),
    sa.Column("agent_id", sa.String(64), nullable=False),
    sa.Column("display_name", sa.String(80), nullable=False),
    sa.Column("role_summary", sa.Text, nullable=False),
    sa.Column("category", sa.String(16), nullable=False),
    sa.Column("visible", sa.Boolean, nullable=False),
    sa.Column("ordering", sa.Integer, nullable=False),
    sa.Column("avatar", Json, nullable=False),
    sa.Column("config", Json, nullable=False),
    sa.UniqueConstraint("tenant_id", "agent_id"),
)

UNFINISHED_TURNS = "status IN ('queued', 'running')"
"""The predicate of ``ix_turns_unfinished`` and of ``ix_jobs_live_key`` (turns and jobs name
their live statuses alike); a query it serves says it the same way, with literals (a bound
value proves nothing to either database's planner)."""

assistant_turns = sa.Table(
    "assistant_turns",
    metadata,
    _id(),
    _tenant(),
    sa.Column(
        "conversation_id",
        sa.String(36),
        sa.ForeignKey("assistant_conversations.id"),
        nullable=False,
    ),
    sa.Column("message_id", sa.String(36), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("agent_id", sa.String(64)),
    _created(),
    sa.Column("finished_at", UtcDateTime()),
    sa.Column("error", sa.Text),
    sa.Index("ix_turns_conversation", "conversation_id", "created_at"),
    # a conversation's unfinished turns, read at every message posted: without it the
    # read took every turn the conversation ever had (decision 0043)
    sa.Index(
        "ix_turns_unfinished",
        "conversation_id",
        "created_at",
        sqlite_where=sa.text(UNFINISHED_TURNS),
        postgresql_where=sa.text(UNFINISHED_TURNS),
    ),
)

events = sa.Table(
    "events",
    metadata,
    _tenant(),
    sa.Column(
        "conversation_id",
        sa.String(36),
        sa.ForeignKey("assistant_conversations.id"),
        primary_key=True,
    ),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("turn_id", sa.String(36)),
    sa.Column("run_id", sa.String(36)),
    sa.Column("task_id", sa.String(36)),
    sa.Column("agent_id", sa.String(64)),
    sa.Column("data", Json, nullable=False),
    _created(),
    sa.Index("ix_events_run", "run_id", "seq"),
)

jobs = sa.Table(
    "jobs",
    metadata,
    sa.Column("id", BigId, primary_key=True, autoincrement=True),
    _tenant(),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("key", sa.String(64)),
    sa.Column("payload", Json, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("run_at", UtcDateTime(), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("max_attempts", sa.Integer, nullable=False),
    sa.Column("lease_owner", sa.Text),  # any host name (review H5)
    sa.Column("lease_until", UtcDateTime()),
    sa.Column("epoch", sa.Integer, nullable=False),
    sa.Column("last_error", sa.Text),
    _created(),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
    sa.Index("ix_jobs_claim", "status", "run_at"),
    # A key's live jobs only: every turn of a conversation is a job of its key, and a read
    # of the key's jobs at each claim and post must not grow with the ones that ended
    # (issue 35, decision 0043). Queries it serves say its predicate with literals.
    sa.Index(
        "ix_jobs_live_key",
        "key",
        sqlite_where=sa.text(UNFINISHED_TURNS),
        postgresql_where=sa.text(UNFINISHED_TURNS),
    ),
    # At most one running job per serialization key, enforced by the database itself.
    sa.Index(
        "ux_jobs_running_key",
        "key",
        unique=True,
        sqlite_where=sa.text("status = 'running'"),
        postgresql_where=sa.text("status = 'running'"),
    ),
)

llm_calls = sa.Table(
    "llm_calls",
    metadata,
    _id(),
    _tenant(),
    sa.Column("conversation_id", sa.String(36)),
    sa.Column("turn_id", sa.String(36)),
    sa.Column("run_id", sa.String(36)),
    sa.Column("node_id", sa.String(64)),
    sa.Column("agent_id", sa.String(64)),
    sa.Column("provider", sa.String(32), nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("prompt_tokens", sa.Integer, nullable=False),
    sa.Column("completion_tokens", sa.Integer, nullable=False),
    sa.Column("total_tokens", sa.Integer, nullable=False),
    sa.Column("latency_ms", sa.Float, nullable=False),
    sa.Column("success", sa.Boolean, nullable=False),
    sa.Column("error", sa.Text),
    sa.Column("cost_usd", sa.Float, nullable=False),
    _created(),
    sa.Column("status", sa.String(16), nullable=False, server_default="ok"),
    sa.Column("estimated", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Index("ix_llm_calls_conversation", "conversation_id", "created_at"),
    sa.Index("ix_llm_calls_run", "run_id"),
    # a turn's calls, summed for the chat routes' usage at every turn: by the conversation's
    # index the sum read every call the conversation had (decision 0043)
    sa.Index("ix_llm_calls_turn", "turn_id"),
)

assistant_runs = sa.Table(
    "assistant_runs",
    metadata,
    _id(),
    _tenant(),
    sa.Column(
        "conversation_id",
        sa.String(36),
        sa.ForeignKey("assistant_conversations.id"),
        nullable=False,
    ),
    sa.Column("project_id", sa.String(36)),
    sa.Column("created_by", sa.String(64), nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    _created(),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
    sa.Column("metadata", Json, nullable=False),
    sa.Index("ix_runs_conversation", "conversation_id", "created_at"),
    sa.Index("ix_runs_tenant", "tenant_id", "created_at"),
)

assistant_tasks = sa.Table(
    "assistant_tasks",
    metadata,
    _id(),
    _tenant(),
    sa.Column("run_id", sa.String(36), sa.ForeignKey("assistant_runs.id"), nullable=False),
    sa.Column(
        "conversation_id",
        sa.String(36),
        sa.ForeignKey("assistant_conversations.id"),
        nullable=False,
    ),
    sa.Column("project_id", sa.String(36)),
    sa.Column("parent_task_id", sa.String(36)),
    sa.Column("step_group", sa.String(8), nullable=False),
    sa.Column("sequence_order", sa.Integer, nullable=False),
    sa.Column("node_id", sa.String(64)),
    sa.Column("depends_on", Json),
    sa.Column("created_by", sa.String(64), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("task_type", sa.String(64), nullable=False),
    sa.Column("parameters", Json, nullable=False),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("is_reversible_by_system", sa.Boolean, nullable=False),
    sa.Column("irreversible_confirmed_at", UtcDateTime()),
    sa.Column("confirmed_hash", sa.String(64)),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("scheduled_at", UtcDateTime()),
    sa.Column("result", Json),
    sa.Column("error", sa.Text),
    _created(),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
    sa.Column("metadata", Json, nullable=False),
    sa.Index("ix_tasks_run", "run_id", "step_group", "sequence_order"),
)

workspace_entities = sa.Table(
    "workspace_entities",
    metadata,
    _id(),
    _tenant(),
    sa.Column("project_id", sa.String(36)),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("name", sa.String(300), nullable=False),
    sa.Column("parent_id", sa.String(36)),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("data", Json, nullable=False),
    sa.Column("idempotency_key", sa.String(80)),
    _created(),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
    sa.Column("deleted_at", UtcDateTime()),
    # data["slug"] when it is a string (a page's address), for an indexed lookup
    sa.Column("slug", sa.String(300)),
    sa.Index("ix_entities_project", "tenant_id", "project_id", "kind"),
    sa.Index("ux_entities_idempotency", "tenant_id", "idempotency_key", unique=True),
    sa.Index("ix_entities_slug", "tenant_id", "project_id", "kind", "slug"),
)

workspace_edges = sa.Table(
    "workspace_edges",
    metadata,
    _id(),
    _tenant(),
    sa.Column("from_id", sa.String(36), sa.ForeignKey("workspace_entities.id"), nullable=False),
    sa.Column("to_id", sa.String(36), sa.ForeignKey("workspace_entities.id"), nullable=False),
    sa.Column("relation", sa.String(64), nullable=False),
    _created(),
    sa.UniqueConstraint("from_id", "to_id", "relation"),
)

idempotency_keys = sa.Table(
    "idempotency_keys",
    metadata,
    sa.Column("tenant_id", sa.String(36), sa.ForeignKey("tenants.id"), primary_key=True),
    sa.Column("key", sa.String(200), primary_key=True),
    sa.Column("request_hash", sa.String(64), nullable=False),
    # 0 while the first request with this key is still being answered
    sa.Column("status_code", sa.Integer, nullable=False),
    sa.Column("response", sa.Text),
    _created(),
)

rules = sa.Table(
    "rules",
    metadata,
    _id(),
    _tenant(),
    sa.Column("project_id", sa.String(36)),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("priority", sa.Integer, nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("trigger", sa.String(32), nullable=False),
    sa.Column("conditions", Json, nullable=False),
    sa.Column("actions", Json, nullable=False),
    sa.Column("stop", sa.Boolean, nullable=False),
    sa.Column("schedule", Json),
    sa.Column("version", sa.Integer, nullable=False),
    _created(),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
    sa.Index("ix_rules_trigger", "tenant_id", "trigger", "enabled", "priority"),
)

# Agent sessions (seed 004): an agent's step function called again and again on a goal.
agent_sessions = sa.Table(
    "agent_sessions",
    metadata,
    _id(),
    _tenant(),
    sa.Column("agent_id", sa.String(64), nullable=False),
    sa.Column(
        "conversation_id",
        sa.String(36),
        sa.ForeignKey("assistant_conversations.id"),
        nullable=False,
    ),
    sa.Column("goal", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("iteration", sa.Integer, nullable=False),
    sa.Column("step", sa.String(200), nullable=False),
    sa.Column("state", Json, nullable=False),
    sa.Column("guidance", sa.Text),
    sa.Column("max_steps", sa.Integer, nullable=False),
    sa.Column("max_runtime_seconds", sa.Float),
    sa.Column("next_run_at", UtcDateTime()),
    # ongoing work's cadence: the least wait between two steps
    sa.Column("every_seconds", sa.Float),
    sa.Column("reason", sa.String(500)),
    _created(),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
    sa.Index("ix_agent_sessions_tenant", "tenant_id", "created_at"),
    sa.Index("ix_agent_sessions_conversation", "conversation_id", "status"),
)

# A session's steps, append-only: (session_id, iteration) is gap-free from 1.
agent_session_steps = sa.Table(
    "agent_session_steps",
    metadata,
    sa.Column("session_id", sa.String(36), sa.ForeignKey("agent_sessions.id"), primary_key=True),
    sa.Column("iteration", sa.Integer, primary_key=True),
    _tenant(),
    sa.Column("step", sa.String(200), nullable=False),
    sa.Column("next_step", sa.String(200), nullable=False),
    sa.Column("text", sa.Text),
    sa.Column("data", Json),
    sa.Column("done", sa.Boolean, nullable=False),
    sa.Column("notes", sa.Text),
    sa.Column("guidance", sa.Text),
    sa.Column("state", Json, nullable=False),
    sa.Column("tools", Json),
    sa.Column("started_at", UtcDateTime(), nullable=False),
    sa.Column("finished_at", UtcDateTime(), nullable=False),
)

# The last firings of each rule (a bounded number per rule), for the panel's rules list.
rule_firings = sa.Table(
    "rule_firings",
    metadata,
    sa.Column("id", BigId, primary_key=True, autoincrement=True),
    _tenant(),
    sa.Column("rule_id", sa.String(36), nullable=False),
    sa.Column("trigger", sa.String(32), nullable=False),
    sa.Column("conversation_id", sa.String(36)),
    sa.Column("actions", Json, nullable=False),
    _created(),
    sa.Index("ix_rule_firings_rule", "rule_id", "id"),
)

handoffs = sa.Table(
    "handoffs",
    metadata,
    _id(),
    _tenant(),
    sa.Column(
        "conversation_id",
        sa.String(36),
        sa.ForeignKey("assistant_conversations.id"),
        nullable=False,
    ),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("reason", sa.String(500), nullable=False),
    sa.Column("priority", sa.String(16), nullable=False),
    sa.Column("priority_rank", sa.Integer, nullable=False),
    sa.Column("metadata", Json, nullable=False),
    sa.Column("snapshot", Json, nullable=False),
    sa.Column("requested_by", Json, nullable=False),
    sa.Column("assignee", sa.String(200)),
    sa.Column("paused_runs", Json, nullable=False),
    _created(),
    sa.Column("assigned_at", UtcDateTime()),
    sa.Column("resolved_at", UtcDateTime()),
    sa.Index("ix_handoffs_queue", "tenant_id", "status", "priority_rank", "created_at"),
    sa.Index(
        "ux_handoffs_open",
        "conversation_id",
        unique=True,
        sqlite_where=sa.text("status IN ('pending', 'active')"),
        postgresql_where=sa.text("status IN ('pending', 'active')"),
    ),
)

api_keys = sa.Table(
    "api_keys",
    metadata,
    _id(),
    _tenant(),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    # the agent an agent token is bound to (a registered agent of the tenant)
    sa.Column("agent_id", sa.String(64)),
    # sha256 of the secret, hex: the secret itself is shown once and never stored
    sa.Column("token_hash", sa.String(64), nullable=False),
    sa.Column("hint", sa.String(16), nullable=False),
    _created(),
    sa.Column("revoked_at", UtcDateTime()),
    sa.Index("ux_api_keys_token_hash", "token_hash", unique=True),
    sa.Index("ix_api_keys_tenant", "tenant_id", "created_at"),
)

# An agent's scratchpad in one conversation (domain/agent_state.py), changed by deltas.
agent_states = sa.Table(
    "agent_states",
    metadata,
    sa.Column(
        "conversation_id",
        sa.String(36),
        sa.ForeignKey("assistant_conversations.id"),
        primary_key=True,
    ),
    sa.Column("agent_id", sa.String(64), primary_key=True),
    _tenant(),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("state", Json, nullable=False),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
)

# A conversation's rolling summary (domain/summary.py): every version kept, never rewritten.
conversation_summaries = sa.Table(
    "conversation_summaries",
    metadata,
    sa.Column(
        "conversation_id",
        sa.String(36),
        sa.ForeignKey("assistant_conversations.id"),
        primary_key=True,
    ),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    _tenant(),
    sa.Column("covered_through_seq", sa.Integer, nullable=False),
    sa.Column("covered_messages", sa.Integer, nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("facts", Json, nullable=False),
    sa.Column("model_failed", sa.Boolean, nullable=False),
    _created(),
)

# Prompt graphs (domain/graph.py): every version kept, never rewritten; a new one is added.
graphs = sa.Table(
    "graphs",
    metadata,
    sa.Column("tenant_id", sa.String(36), sa.ForeignKey("tenants.id"), primary_key=True),
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("components", Json, nullable=False),
    sa.Column("edges", Json, nullable=False),
    _created(),
    sa.Column("created_by", sa.String(100), nullable=False),
)

schedules = sa.Table(
    "schedules",
    metadata,
    _id(),
    _tenant(),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("cron", sa.String(200), nullable=False),
    sa.Column("timezone", sa.String(64), nullable=False),
    sa.Column("action", Json, nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("next_run_at", UtcDateTime()),
    sa.Column("last_fired_at", UtcDateTime()),
    sa.Column("last_error", sa.Text),
    sa.Column("fired", sa.Integer, nullable=False),
    _created(),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
    sa.Index("ix_schedules_tenant", "tenant_id", "created_at"),
)

webhooks = sa.Table(
    "webhooks",
    metadata,
    _id(),
    _tenant(),
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("events", Json, nullable=False),
    sa.Column("secret", Json, nullable=False),  # {"secret": …}, sealed like other secrets
    _created(),
    sa.Index("ix_webhooks_tenant", "tenant_id", "created_at"),
)

services = sa.Table(
    "services",
    metadata,
    _id(),
    _tenant(),
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("base_url", sa.Text, nullable=False),
    sa.Column("headers", Json, nullable=False),  # {name: value}, secrets sealed as other secrets
    sa.Column("unattended_methods", Json, nullable=False),  # ["GET", …]: no person asked
    _created(),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
    sa.UniqueConstraint("tenant_id", "name"),
)

webhook_deliveries = sa.Table(
    "webhook_deliveries",
    metadata,
    sa.Column("id", BigId, primary_key=True, autoincrement=True),
    _tenant(),
    sa.Column("webhook_id", sa.String(36), nullable=False),
    sa.Column("delivery_id", sa.String(36), nullable=False),
    sa.Column("event", sa.String(32), nullable=False),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("response_code", sa.Integer),
    sa.Column("error", sa.Text),
    sa.Column("duration_ms", sa.Float, nullable=False),
    sa.Column("next_attempt_at", UtcDateTime()),
    _created(),
    sa.Index("ix_webhook_deliveries_webhook", "webhook_id", "id"),
)


def _bytewise(length: int) -> sa.types.TypeEngine[str]:
    """A string compared and ordered by its bytes on both databases (SQLite's BINARY, the
    "C" collation on PostgreSQL)."""
    return sa.String(length).with_variant(sa.String(length, collation="C"), "postgresql")


# The Agent Protocol's store (store/memory_items.py): long-term memory items, kept by
# namespace (its labels joined by ".") and key. The primary key serves a tenant's prefix
# searches: the tenant, then a range of namespaces (from "a.b." up to "a.b/"), compared
# bytewise; it orders namespaces and keys the same way on both databases too.
memory_items = sa.Table(
    "memory_items",
    metadata,
    sa.Column("tenant_id", sa.String(36), sa.ForeignKey("tenants.id"), primary_key=True),
    sa.Column("namespace", _bytewise(1009), primary_key=True),  # 10 labels of 100, 9 dots
    sa.Column("key", _bytewise(200), primary_key=True),
    sa.Column("value", Json, nullable=False),
    _created(),
    sa.Column("updated_at", UtcDateTime(), nullable=False),
    sa.Column("expires_at", UtcDateTime()),  # None: kept until deleted
    # the value's bytes as compact JSON: a tenant's quota is a sum of these
    sa.Column("size", sa.Integer, nullable=False, server_default="0"),
    sa.Index("ix_memory_items_tenant_updated", "tenant_id", "updated_at"),
)
