"""Comparisons for `when` and `exec_while`: `{"pre", "post", "condition"}` dicts."""

from __future__ import annotations

from typing import Any

from couler.core.templates.output import Output


def _predicate(pre: Any, post: Any, condition: str) -> dict[str, Any]:
    return {"pre": pre, "post": post, "condition": condition}


def equal(pre: Any, post: Any = None) -> dict[str, Any]:
    return _predicate(pre, post, "==")


def not_equal(pre: Any, post: Any = None) -> dict[str, Any]:
    return _predicate(pre, post, "!=")


def bigger(pre: Any, post: Any = None) -> dict[str, Any]:
    return _predicate(pre, post, ">")


def smaller(pre: Any, post: Any = None) -> dict[str, Any]:
    return _predicate(pre, post, "<")


def bigger_equal(pre: Any, post: Any = None) -> dict[str, Any]:
    return _predicate(pre, post, ">=")


def smaller_equal(pre: Any, post: Any = None) -> dict[str, Any]:
    return _predicate(pre, post, "<=")


def first_output(value: Any) -> Output | None:
    """The output a step function returned (the first, if it returned several)."""
    if isinstance(value, Output):
        return value
    if isinstance(value, (list, tuple)):
        for item in value:
            found = first_output(item)
            if found is not None:
                return found
    return None


def operand(value: Any, prefix: str) -> str:
    """A side of a comparison: a step's output as its Argo expression, else the value."""
    output = first_output(value)
    if output is not None:
        return output.reference(prefix)
    return str(value)
