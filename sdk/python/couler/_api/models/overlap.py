from typing import Literal

Overlap = Literal["allow", "cancel_other", "skip"]

OVERLAP_VALUES: set[Overlap] = {
    "allow",
    "cancel_other",
    "skip",
}


def check_overlap(value: str) -> Overlap:
    if value in OVERLAP_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {OVERLAP_VALUES!r}")
