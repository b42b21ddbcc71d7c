"""Where a new step goes: the main steps, a nested steps template, or the DAG.

The DSL's block functions (`set_dependencies`, `when`, `concurrent`, `map`,
`exec_while`, `set_exit_handler`) push a scope while they run the user's
function; a step made inside takes its place and its extras (a `when`, its
dependencies, a name suffix) from the scopes around it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from couler.core import states
from couler.core.templates.step import Step


@dataclass
class DagScope:
    """Steps become DAG tasks after `dependencies` (a list, or a `depends` expression)."""

    dependencies: list[str] | str | None
    touched: list[str] = field(default_factory=list)


@dataclass
class StepsScope:
    """Steps go to a nested steps template, one group each."""

    groups: list[list[Step]] = field(default_factory=list)


@dataclass
class ExitScope:
    """Steps run when the workflow ends with `status`."""

    status: str
    steps: list[Step] = field(default_factory=list)


@dataclass
class WhenScope:
    """Steps run only when `condition` holds; `producer` is the step it tests."""

    condition: str
    producer: str | None


@dataclass
class ConcurrentScope:
    """Steps run in parallel in `group`; their names get `-<index>`."""

    group: list[Step]
    index: int


@dataclass
class MapScope:
    """A step runs once per item; `params[i]` names the parameter of argument i."""

    params: dict[int, str] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)


@dataclass(frozen=True)
class MapItem:
    """Stands for the i-th mapped argument while `map` runs the function."""

    index: int


_Container = DagScope | StepsScope | ExitScope
S = TypeVar("S")


@contextmanager
def scope(block: S) -> Iterator[S]:
    states._scopes.append(block)
    try:
        yield block
    finally:
        states._scopes.pop()


def _context() -> tuple[_Container | None, list[object]]:
    """The innermost container scope, and the modifier scopes inside it."""
    modifiers: list[object] = []
    for block in reversed(states._scopes):
        if isinstance(block, (DagScope, StepsScope, ExitScope)):
            return block, modifiers
        modifiers.append(block)
    return None, modifiers


def _find(modifiers: list[object], kind: type[S]) -> S | None:
    for block in modifiers:
        if isinstance(block, kind):
            return block
    return None


def _in_dag(container: _Container | None) -> bool:
    return isinstance(container, DagScope) or (
        container is None and states.workflow.dag_mode
    )


def reference_prefix() -> str:
    """How a step made now refers to other steps: `tasks` in a DAG, else `steps`."""
    return "tasks" if _in_dag(_context()[0]) else "steps"


def dag_dependencies() -> list[str]:
    """The steps a step made now depends on by `set_dependencies([...])`."""
    container, modifiers = _context()
    if (
        isinstance(container, DagScope)
        and isinstance(container.dependencies, list)
        and _find(modifiers, WhenScope) is None
    ):
        return list(container.dependencies)
    return []


def map_scope() -> MapScope | None:
    return _find(_context()[1], MapScope)


def step_name(name: str, generated: bool) -> str:
    """The name of a step made now; generated names in `concurrent` get `-<index>`."""
    concurrent = _find(_context()[1], ConcurrentScope)
    if generated and concurrent is not None:
        return "%s-%d" % (name, concurrent.index)
    return name


def existing_task(name: str) -> Step | None:
    """In a DAG, the task `name` if it is there; it then also gets the dependencies asked for."""
    container, _ = _context()
    if not _in_dag(container):
        return None
    task = states.workflow.tasks.get(name)
    if task is None:
        return None
    if isinstance(container, DagScope):
        container.touched.append(name)
        for dependency in dag_dependencies():
            task.dependencies = task.dependencies or []
            if dependency not in task.dependencies:
                task.dependencies.append(dependency)
    return task


def add_step(step: Step) -> None:
    """Put a new step where the scopes around it say."""
    container, modifiers = _context()
    when = _find(modifiers, WhenScope)
    mapped = _find(modifiers, MapScope)
    if mapped is not None:
        mapped.steps.append(step)
    if isinstance(container, ExitScope):
        step.when = "{{workflow.status}} == %s" % container.status
        container.steps.append(step)
        return
    if when is not None:
        step.when = when.condition
    if _in_dag(container):
        _add_task(step, container, when)
        return
    groups = container.groups if isinstance(container, StepsScope) else states.workflow.steps
    concurrent = _find(modifiers, ConcurrentScope)
    if concurrent is not None:
        concurrent.group.append(step)
    elif when is not None and when.producer is not None:
        _add_after(groups, step, when.producer)
    else:
        groups.append([step])


def add_group(group: list[Step]) -> None:
    """Add steps made in `concurrent` as one group of parallel steps."""
    container, _ = _context()
    groups = container.groups if isinstance(container, StepsScope) else states.workflow.steps
    groups.append(group)


def _add_task(step: Step, container: _Container | None, when: WhenScope | None) -> None:
    states.workflow.dag_mode = True
    if when is not None and when.producer is not None:
        step.dependencies = [when.producer]
        step.conditional = True
    elif isinstance(container, DagScope):
        if isinstance(container.dependencies, str):
            step.depends = container.dependencies
        elif container.dependencies:
            step.dependencies = list(container.dependencies)
    if isinstance(container, DagScope):
        container.touched.append(step.name)
    states.workflow.tasks[step.name] = step


def _add_after(groups: list[list[Step]], step: Step, producer: str) -> None:
    """Run a conditional step in the group right after the step its condition tests."""
    for index, group in enumerate(groups):
        if any(existing.name == producer for existing in group):
            if index + 1 < len(groups):
                groups[index + 1].append(step)
            else:
                groups.append([step])
            return
    groups.append([step])
