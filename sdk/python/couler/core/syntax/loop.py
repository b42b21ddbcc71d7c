"""`map`: run a step once per item, with Argo's `withItems`."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from couler.core import step_update


def map(function: Callable[..., Any], *arguments: list[Any]) -> Any:
    """Run `function(x, y, …)` for each item of the zipped argument lists, in parallel."""
    if not arguments:
        raise ValueError("map() needs at least one list of arguments")
    lengths = {len(values) for values in arguments}
    if len(lengths) != 1:
        raise ValueError("the argument lists of map() must have the same length")
    items = [step_update.MapItem(index) for index in builtins.range(len(arguments))]
    with step_update.scope(step_update.MapScope()) as mapped:
        result = function(*items)
    missing = [index for index in builtins.range(len(arguments)) if index not in mapped.params]
    if missing:
        raise ValueError("map(): the function passed no step argument %s" % missing)
    with_items = [
        {mapped.params[index]: value for index, value in enumerate(values)}
        for values in zip(*arguments)
    ]
    for step in mapped.steps:
        step.with_items = with_items
    return result
