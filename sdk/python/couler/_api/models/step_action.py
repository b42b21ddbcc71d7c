from typing import Literal

StepAction = Literal["cached", "kept", "not_needed", "run", "skipped", "tune"]

STEP_ACTION_VALUES: set[StepAction] = {
    "cached",
    "kept",
    "not_needed",
    "run",
    "skipped",
    "tune",
}


def check_step_action(value: str) -> StepAction:
    if value in STEP_ACTION_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {STEP_ACTION_VALUES!r}"
    )
