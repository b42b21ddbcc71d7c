from typing import Literal

Goal = Literal["maximize", "minimize"]

GOAL_VALUES: set[Goal] = {
    "maximize",
    "minimize",
}


def check_goal(value: str) -> Goal:
    if value in GOAL_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {GOAL_VALUES!r}")
