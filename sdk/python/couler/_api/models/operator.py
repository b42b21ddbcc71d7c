from typing import Literal

Operator = Literal["eq", "ge", "gt", "in", "le", "lt", "ne", "notin"]

OPERATOR_VALUES: set[Operator] = {
    "eq",
    "ge",
    "gt",
    "in",
    "le",
    "lt",
    "ne",
    "notin",
}


def check_operator(value: str) -> Operator:
    if value in OPERATOR_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {OPERATOR_VALUES!r}")
