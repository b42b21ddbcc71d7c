"""`concurrent`: run several step functions in parallel."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from couler.core import states, step_update
from couler.core.templates.step import Step
from couler.core.templates.template import Template


def concurrent(function_list: list[Callable[[], Any]], subtasks: bool = False) -> list[Any]:
    """Run the functions' steps side by side; return what each function returned.

    With `subtasks`, each function's steps run in sequence in a steps template
    of their own (`concurrent-task-<n>`), and those templates run side by side.
    """
    if not isinstance(function_list, (list, tuple)):
        raise TypeError("concurrent() takes a list of functions")
    group: list[Step] = []
    results = []
    line = sys._getframe(1).f_lineno
    for index, function in enumerate(function_list, start=1):
        if subtasks:
            results.append(_subtask(function, index, line, group))
        else:
            with step_update.scope(step_update.ConcurrentScope(group, index)):
                results.append(function())
    if group:
        step_update.add_group(group)
    return results


def _subtask(function: Callable[[], Any], index: int, line: int, group: list[Step]) -> Any:
    with step_update.scope(step_update.StepsScope()) as inner:
        result = function()
    states.workflow.concurrent_tasks += 1
    name = "concurrent-task-%d" % states.workflow.concurrent_tasks
    steps = [[step.to_step_dict() for step in steps] for steps in inner.groups]
    states.workflow.add_template(Template(name, {"name": name, "steps": steps}, pod=False))
    group.append(Step("%s-%d-%d" % (name, line, index), name))
    return result
