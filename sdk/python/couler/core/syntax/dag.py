"""DAGs: steps that run after the steps they depend on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from couler.core import states, step_update


def set_dependencies(
    step_function: Callable[[], Any], dependencies: list[str] | str | None = None
) -> Any:
    """Run `step_function`'s steps as DAG tasks after `dependencies`.

    `dependencies` is a list of step names (all must succeed), or an Argo
    `depends` expression such as `"A && (B.Succeeded || B.Failed)"`. A task
    that is already there gets the dependencies added instead. Returns what
    `step_function` returned.
    """
    if dependencies is not None and not isinstance(dependencies, (list, str)):
        raise TypeError("dependencies must be a list of step names or a depends expression")
    states.workflow.dag_mode = True
    with step_update.scope(step_update.DagScope(dependencies)):
        return step_function()


def dag(dependency_graph: list[list[Callable[[], Any]]]) -> None:
    """Build a DAG from edges: `[A]` adds A; `[A, B]` makes B depend on A."""
    for edge in dependency_graph:
        if not isinstance(edge, (list, tuple)) or len(edge) not in (1, 2):
            raise ValueError("each edge of the dependency graph is [step] or [parent, child]")
        if len(edge) == 1:
            set_dependencies(edge[0])
            continue
        parent, child = edge
        states.workflow.dag_mode = True
        with step_update.scope(step_update.DagScope(None)) as made:
            parent()
        if not made.touched:
            raise ValueError("the parent of a DAG edge made no step")
        set_dependencies(child, dependencies=[made.touched[-1]])
