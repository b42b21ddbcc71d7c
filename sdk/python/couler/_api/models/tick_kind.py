from typing import Literal

TickKind = Literal["catchup", "scheduled"]

TICK_KIND_VALUES: set[TickKind] = {
    "catchup",
    "scheduled",
}


def check_tick_kind(value: str) -> TickKind:
    if value in TICK_KIND_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {TICK_KIND_VALUES!r}")
