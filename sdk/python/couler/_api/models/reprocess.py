from typing import Literal

Reprocess = Literal["all", "failed", "missing"]

REPROCESS_VALUES: set[Reprocess] = {
    "all",
    "failed",
    "missing",
}


def check_reprocess(value: str) -> Reprocess:
    if value in REPROCESS_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {REPROCESS_VALUES!r}")
