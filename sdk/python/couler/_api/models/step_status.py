from typing import Literal

StepStatus = Literal[
    "cached", "cancelled", "failed", "pending", "running", "skipped", "succeeded"
]

STEP_STATUS_VALUES: set[StepStatus] = {
    "cached",
    "cancelled",
    "failed",
    "pending",
    "running",
    "skipped",
    "succeeded",
}


def check_step_status(value: str) -> StepStatus:
    if value in STEP_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {STEP_STATUS_VALUES!r}"
    )
