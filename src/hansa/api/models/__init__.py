"""What the API answers, as typed models for its OpenAPI description.

The routes build their JSON themselves (as they always have); these models describe it,
route by route, and ``api/openapi.py`` puts them in ``/openapi.json``. Where a route dumps
a domain model as it is (a handoff, a graph, a rule's firing), the description names that
model. ``tests/e2e/test_openapi.py`` checks real answers against the description.

- ``base``: the shared error body and ``answers``, the ``responses`` of a route.
- ``identity``: health, the caller, keys.
- ``agents``: agents and projects.
- ``conversations``: conversations, messages, claims, control, turns, handoffs.
- ``runs``: runs, tasks, task types, the seed's chat and execute answers, run logs.
- ``automation``: rules, graphs, agent sessions.
- ``usage``: model calls, usage, workspace entities.
- ``events``: the events of the SSE and WebSocket streams, one schema per type.
"""
