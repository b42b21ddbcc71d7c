from typing import Literal

BackfillState = Literal["cancelled", "done", "running"]

BACKFILL_STATE_VALUES: set[BackfillState] = {
    "cancelled",
    "done",
    "running",
}


def check_backfill_state(value: str) -> BackfillState:
    if value in BACKFILL_STATE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {BACKFILL_STATE_VALUES!r}"
    )
