"""The API's description (``/openapi.json``) and its pages (``/docs``, ``/redoc``).

``install`` makes the description truthful where FastAPI alone would not be:

- every 4xx and 5xx is ``ErrorBody`` (``api/errors.py``), FastAPI's own 422 schema gone;
- the statuses any route may answer are added to each operation: 400 and 413 (the body
  limits, ``api/errors.py``), 503 (the database), 401, 403 and 429 under ``/api/``
  (``api/guard.py``, ``api/policy.py``, ``api/limits.py``), 404 where the path holds an id,
  422 where there is input, and 409 and 422 on a POST (``api/idempotency.py``);
- operations under ``/api/`` need a bearer key (``securitySchemes``);
- every POST declares its optional ``Idempotency-Key`` header (``api/idempotency.py``), so
  generated clients can send it;
- a model whose input and output schemas differ (FastAPI's ``X-Input`` and ``X-Output``,
  both titled ``X``) gets two distinct names and titles, ``XInput`` and ``XOutput``:
  generators such as ``openapi-python-client`` name models by title and drop a duplicate;
- the events of the live streams are schemas of their own (``api/models/events.py``).

The pages load Swagger UI and ReDoc from Hansa itself (the ``fastapi-offline`` package's
copies), so they work on a machine without internet.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request
from starlette.responses import HTMLResponse

from hansa.api.guard import KEYED, SESSION_PATH
from hansa.api.idempotency import MAX_KEY_LENGTH
from hansa.api.models import base, events

ASSETS = "/docs-assets"
"""Where Swagger UI's and ReDoc's files are served."""
_ASSETS_DIR = resources.files("fastapi_offline") / "static"

TAGS: list[dict[str, str]] = [
    {"name": "health", "description": "Is the server up, can it take work."},
    {"name": "identity", "description": "Who calls: the key's principal, the panel's session."},
    {"name": "keys", "description": "API keys of the tenant (admin)."},
    {"name": "agents", "description": "The roster and the tenant's registered agents."},
    {"name": "projects", "description": "The context agents work in."},
    {"name": "conversations", "description": "Conversations, messages, timeline."},
    {
        "name": "events",
        "description": "Live events (Server-Sent Events; the WebSocket at "
        "`/api/conversations/{id}/ws` sends the same): see the `Event` schema.",
    },
    {"name": "chat", "description": "The seed-compatible chat and execute routes."},
    {"name": "turns", "description": "Turns in flight."},
    {"name": "claims", "description": "Claim/defer turn-taking by external assistants."},
    {"name": "control", "description": "Control events: pause, resume, cancel, preempt, hand off."},
    {"name": "agent state", "description": "Agents' scratchpads in a conversation."},
    {"name": "handoffs", "description": "Conversations handed to a person, and back."},
    {"name": "runs", "description": "Runs: plans, approval, control, undo, logs."},
    {"name": "tasks", "description": "Tasks (a run's steps) and the task types."},
    {"name": "rules", "description": "Rules that fire on triggers."},
    {"name": "graphs", "description": "Prompt graphs, their versions and runs."},
    {"name": "sessions", "description": "Agent sessions: ongoing work in steps."},
    {"name": "schedules", "description": "Cron times that post a message or start a run."},
    {
        "name": "webhooks",
        "description": "Completion webhooks: signed events when a run, turn or session ends.",
    },
    {
        "name": "services",
        "description": "Named outbound services: base URL, sealed credentials, and the methods "
        "graphs and rules may call without a person.",
    },
    {"name": "usage", "description": "Model calls, tokens and cost."},
    {"name": "workspace", "description": "Workspace entities, pages and products."},
    {
        "name": "openai",
        "description": "OpenAI-compatible chat (`/v1`): `model` is an agent's id, a completion "
        "is a turn.",
    },
    {
        "name": "ag-ui",
        "description": "AG-UI (CopilotKit's protocol, `/ag-ui`): a turn of an agent streamed as "
        "AG-UI events.",
    },
    {
        "name": "agent-protocol",
        "description": "The Agent Protocol / LangGraph Platform API (`/ap`), for "
        "`langgraph-sdk`'s client: assistants are agents, threads are conversations, a run is "
        "a turn and what came of it; plus the store (long-term memory items).",
    },
]

_DESCRIPTION = """\
Every answer that is not a success is `{"error": {"code", "message", "details"}}`
(`ErrorBody`). Send the API key as `Authorization: Bearer <key>` (create one with
`hansa keys create`). A POST may carry an `Idempotency-Key`: the same key and body get
the same answer, once.

The events of `GET /api/conversations/{id}/events` (SSE: `id` the seq, `event` the type,
`data` the event as JSON) and of the WebSocket `/api/conversations/{id}/ws` (one JSON text
frame per event) are the `Event` schema: one `…Event` schema per type, its `data` one
`…Data` schema. The WebSocket also takes `WebSocketMessage` and `WebSocketControlRequest`
frames and answers them with `WebSocketAccepted`, `WebSocketControl` or `WebSocketError`.
"""

_BODY_METHODS = frozenset({"post", "put", "patch"})


def operation_id(route: APIRoute) -> str:
    """``create_run`` -> ``createRun``: the route function's name, in camelCase."""
    head, *rest = route.name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def install(app: FastAPI) -> None:
    """Serve ``/docs`` and ``/redoc`` from local files and make ``app.openapi()`` truthful.
    Call it before the panel is mounted at ``/`` (the first match wins)."""
    app.mount(ASSETS, StaticFiles(directory=str(_ASSETS_DIR)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS}/favicon.png",
            with_google_fonts=False,
        )

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                description=_DESCRIPTION,
                routes=app.routes,
                tags=TAGS,
            )
            complete(spec)
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def complete(spec: dict[str, Any]) -> None:
    """Add what FastAPI leaves out of ``spec`` (see the module's docstring), in place."""
    components = spec.setdefault("components", {})
    schemas: dict[str, Any] = components.setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    schemas["ErrorBody"], schemas["ErrorInfo"] = _error_schemas()
    for name, schema in events.schemas().items():
        if name in schemas and _shape(schemas[name]) != _shape(schema):
            raise RuntimeError(f"two schemas are named {name!r}: rename one")
        schemas.setdefault(name, schema)  # a model the routes use too, as they give it
    components["securitySchemes"] = {
        "bearerKey": {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key (`hk_…`) or an agent's token.",
        }
    }
    for path, operations in spec.get("paths", {}).items():
        for method, operation in operations.items():
            _complete_operation(path, method, operation)
    _distinct_names(spec)


_SIDES = ("-Input", "-Output")
_REF = "#/components/schemas/"


def _distinct_names(spec: dict[str, Any]) -> None:
    """``X-Input`` and ``X-Output`` renamed ``XInput`` and ``XOutput`` (titles too), every
    reference to them with them."""
    schemas: dict[str, Any] = spec["components"]["schemas"]
    renamed = {n: n.replace("-", "") for n in schemas if n.endswith(_SIDES)}
    if not renamed:
        return
    for old, new in renamed.items():
        if new in schemas:
            raise RuntimeError(f"two schemas are named {new!r}: rename one")
        schemas[new] = {**schemas.pop(old), "title": new}
    refs = {_REF + old: _REF + new for old, new in renamed.items()}

    def rewrite(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref in refs:
                node["$ref"] = refs[ref]
            for value in node.values():
                rewrite(value)
        elif isinstance(node, list):
            for value in node:
                rewrite(value)

    rewrite(spec)


def _shape(schema: dict[str, Any]) -> tuple[Any, ...]:
    """What tells two schemas apart (FastAPI and pydantic differ in the defaults they show)."""
    return schema.get("description"), sorted(schema.get("properties", {})), schema.get("enum")


def _error_schemas() -> tuple[dict[str, Any], dict[str, Any]]:
    ref = "#/components/schemas/{model}"
    body = base.ErrorBody.model_json_schema(ref_template=ref, mode="serialization")
    info = body.pop("$defs")["ErrorInfo"]
    return body, info


_IDEMPOTENCY_KEY: dict[str, Any] = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Sent again with the same body, the request is answered once and the "
    "answer replayed (for `HANSA_IDEMPOTENCY_TTL_SECONDS`); with another body, 422; while the "
    "first is being answered, 409.",
    "schema": {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_KEY_LENGTH,
        "pattern": r"\S",
    },
}


def _complete_operation(path: str, method: str, operation: dict[str, Any]) -> None:
    statuses = {400, 413, 503}
    if path.startswith(KEYED):
        statuses |= {403, 429}
    if path.startswith(KEYED) and path != SESSION_PATH:
        statuses.add(401)
        operation["security"] = [{"bearerKey": []}]
    if re.search(r"\{[a-z_]+_id\}", path):
        statuses.add(404)
    if operation.get("parameters") or method in _BODY_METHODS:
        statuses.add(422)
    if method == "post":
        statuses |= {409, 422}  # an Idempotency-Key in use, or invalid or reused
        parameters: list[dict[str, Any]] = operation.setdefault("parameters", [])
        if not any(p.get("name", "").lower() == "idempotency-key" for p in parameters):
            parameters.append(_IDEMPOTENCY_KEY)
    responses: dict[str, Any] = operation.setdefault("responses", {})
    for status in sorted(statuses):
        responses.setdefault(str(status), base.error_response(status))
    for code, response in responses.items():
        if code.startswith(("4", "5")):
            response["content"] = base.error_response(int(code))["content"]
            if response.get("description") in (None, "Validation Error"):  # FastAPI's
                response["description"] = base.ERRORS.get(int(code), "Error")
            if code in ("429", "503"):
                response["headers"] = {
                    "Retry-After": {
                        "description": "Seconds to wait before trying again.",
                        "schema": {"type": "integer"},
                    }
                }
