"""What the API answers, as typed models: one model per answer, for the route and its reader.

A route returns its model (an ``Out`` built from the domain object, ``base.Out``), and
FastAPI writes the JSON, checks it and describes it in ``/openapi.json`` from that one
model; ``hansa.client`` reads the same models back. Secrets are masked in the models
(``base.Masked``), nowhere else. Where a route returns a domain model as it is (a handoff,
a graph, a rule's firing, a log entry), that model is the answer. Routes that still build a
dict name their model in ``responses=`` (``base.answers``) for the description only;
``tests/e2e/test_openapi.py`` checks real answers against the description.

- ``base``: the shared error body and ``answers``, the ``responses`` of a route.
- ``identity``: health, the caller, keys.
- ``agents``: agents and projects.
- ``conversations``: conversations, messages, claims, control, turns, handoffs.
- ``runs``: runs, tasks, task types, the seed's chat and execute answers, run logs.
- ``automation``: rules, graphs, agent sessions.
- ``usage``: model calls, usage, workspace entities.
- ``events``: the events of the SSE and WebSocket streams, one schema per type.
"""
