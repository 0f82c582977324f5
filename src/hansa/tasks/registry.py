"""The task type registry: built-ins and plugins register through the same hook."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from typing import Any

from hansa import errors
from hansa.tasks.base import TaskType

Register = Callable[[TaskType[Any]], None]
Hook = Callable[[Register], None]


class TaskRegistry:
    """Named task types; names are unique."""

    def __init__(self, hooks: Iterable[Hook] = ()) -> None:
        self._types: dict[str, TaskType[Any]] = {}
        for hook in hooks:
            hook(self.register)

    def register(self, task_type: TaskType[Any]) -> None:
        """Add a task type; a second type with the same name is a ConfigError."""
        if task_type.name in self._types:
            raise errors.ConfigError(f"task type {task_type.name!r} is registered twice")
        self._types[task_type.name] = task_type

    def get(self, name: str) -> TaskType[Any]:
        """The task type, or InvalidInput naming near misses."""
        try:
            return self._types[name]
        except KeyError:
            near = difflib.get_close_matches(name, self._types, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise errors.InvalidInput(
                f"unknown task type {name!r}{hint}", details={"field": "taskType"}
            ) from None

    def for_node(self, node_type: str) -> TaskType[Any]:
        """The task type a graph's node of ``node_type`` runs: the one that names it as its
        ``node_type``, else the one of the same name."""
        for task_type in self._types.values():
            if task_type.node_type == node_type:
                return task_type
        return self.get(node_type)

    def __contains__(self, name: object) -> bool:
        return name in self._types

    def all(self) -> list[TaskType[Any]]:
        """Every task type, by name."""
        return [self._types[n] for n in sorted(self._types)]


def default_registry() -> TaskRegistry:
    """The built-in task types."""
    from hansa.tasks.builtin import BUILTIN_HOOKS

    return TaskRegistry(BUILTIN_HOOKS)
