from typing import Literal

StepCacheStatus = Literal["hit", "miss", "not_cacheable", "not_needed", "pending"]

STEP_CACHE_STATUS_VALUES: set[StepCacheStatus] = {
    "hit",
    "miss",
    "not_cacheable",
    "not_needed",
    "pending",
}


def check_step_cache_status(value: str) -> StepCacheStatus:
    if value in STEP_CACHE_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {STEP_CACHE_STATUS_VALUES!r}"
    )
