"""`exec_while`: run a step again and again while its output compares as asked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from couler.core import states, step_update
from couler.core.syntax.predicates import first_output
from couler.core.templates.step import Step
from couler.core.templates.template import Template


def exec_while(condition: dict[str, Any], inner_while: Callable[[], Any]) -> Any:
    """Run `inner_while`'s step, then again while its output compares to the value.

    `condition` is a predicate with one side, e.g. `couler.equal("tails")`
    (a callable side is called for the value). Becomes a recursive steps
    template `exec-while-<template>`.
    """
    if not isinstance(condition, dict) or "condition" not in condition:
        raise TypeError("exec_while() takes a predicate such as couler.equal(value)")
    value = condition["pre"] if condition["post"] is None else condition["post"]
    if callable(value):
        value = value()
    with step_update.scope(step_update.StepsScope()) as inner:
        result = inner_while()
    steps = [step for group in inner.groups for step in group]
    if not steps:
        raise ValueError("the body of exec_while made no step")
    last = steps[-1]
    output = first_output(result) or first_output(last.outputs)
    if output is None:
        raise ValueError("the body of exec_while returned no step output")
    name = "exec-while-" + last.template
    again = Step(
        name + "-exit",
        name,
        when="%s %s %s" % (output.reference("steps"), condition["condition"], value),
    )
    groups = [[step.to_step_dict() for step in group] for group in inner.groups]
    groups.append([again.to_step_dict()])
    states.workflow.add_template(Template(name, {"name": name, "steps": groups}, pod=False))
    step_update.add_step(Step("exec-while-" + last.name, name))
    return result
