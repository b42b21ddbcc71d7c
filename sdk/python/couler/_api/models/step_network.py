from typing import Literal

StepNetwork = Literal["host", "none"]

STEP_NETWORK_VALUES: set[StepNetwork] = {
    "host",
    "none",
}


def check_step_network(value: str) -> StepNetwork:
    if value in STEP_NETWORK_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {STEP_NETWORK_VALUES!r}"
    )
