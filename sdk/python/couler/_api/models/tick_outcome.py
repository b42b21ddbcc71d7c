from typing import Literal

TickOutcome = Literal[
    "failed", "fired", "rejected_quota", "skipped_missed", "skipped_overlap"
]

TICK_OUTCOME_VALUES: set[TickOutcome] = {
    "failed",
    "fired",
    "rejected_quota",
    "skipped_missed",
    "skipped_overlap",
}


def check_tick_outcome(value: str) -> TickOutcome:
    if value in TICK_OUTCOME_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TICK_OUTCOME_VALUES!r}"
    )
