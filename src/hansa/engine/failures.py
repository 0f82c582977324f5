"""What the user reads when a turn fails: its cause in plain words, and what to do next.

One sentence names the cause (the model, the server's configuration, a law, an outside
system, the database, time, or Hansa itself), said once; the error's own text is not
repeated (a model or an outside system may have written it) but its code is kept with the
message (``metadata.error``) and the ``error`` event.
"""

from __future__ import annotations

from sqlalchemy import exc as sa_exc

from hansa import errors
from hansa.domain.agent import AgentDefinition
from hansa.engine import laws, templates

_CAUSES: tuple[tuple[type[BaseException], str, str], ...] = (
    (
        errors.ProviderError,
        "the language model did not answer",
        "Please send your message again; if it keeps failing, check the model settings of "
        "this Hansa server.",
    ),
    (
        errors.ScriptExhausted,
        "the language model did not answer",
        "Please send your message again; if it keeps failing, check the model settings of "
        "this Hansa server.",
    ),
    (
        errors.ConfigError,
        "this Hansa server is not set up for it",
        "Whoever runs this server needs to check its settings; the server's log says which.",
    ),
    (
        laws.ScopeDenied,
        "the law of allowed scope does not let it do that here",
        "Ask for something within this agent's scope, or ask another agent.",
    ),
    (
        laws.MissingParameters,
        "something it needed was missing or unclear (the law of clarity)",
        "Please say it again with the missing details.",
    ),
    (
        templates.MissingVariable,
        "something it needed was missing or unclear (the law of clarity)",
        "Please say it again with the missing details.",
    ),
    (
        errors.NotFound,
        "something it needed does not exist (any more)",
        "Please check what you referred to and send your message again.",
    ),
    (
        errors.TaskFailed,
        "an outside system it used failed",
        "Please try again in a moment; if it keeps failing, check that system's connection.",
    ),
    (
        TimeoutError,
        "it took too long",
        "Please send your message again, or ask for less at once.",
    ),
    (
        sa_exc.DBAPIError,
        "the database could not be reached",
        "Please try again in a moment.",
    ),
)


def message(agent: AgentDefinition, exc: BaseException | None) -> str:
    """The failed turn's answer: who could not finish, why, and what to do next."""
    cause, then = (
        "something unexpected went wrong inside Hansa",
        "It is in the server's log; please send your message again.",
    )
    for kind, because, next_step in _CAUSES:
        if isinstance(exc, kind):
            cause, then = because, next_step
            break
    return f"Sorry, {agent.display_name} could not finish this reply because {cause}. {then}"
