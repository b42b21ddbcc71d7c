"""`when`: run a step only if an earlier step's output compares as asked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from couler.core import step_update
from couler.core.syntax.predicates import first_output, operand


def when(condition: dict[str, Any], function: Callable[[], Any]) -> Any:
    """Run `function`'s steps only when `condition` (e.g. `couler.equal(out, "heads")`) holds."""
    if not isinstance(condition, dict) or "condition" not in condition:
        raise TypeError("when() takes a predicate such as couler.equal(output, value)")
    prefix = step_update.reference_prefix()
    pre, post = condition["pre"], condition["post"]
    expression = "%s %s %s" % (operand(pre, prefix), condition["condition"], operand(post, prefix))
    producer = first_output(pre) or first_output(post)
    scope = step_update.WhenScope(expression, producer.step_name if producer else None)
    with step_update.scope(scope):
        return function()
