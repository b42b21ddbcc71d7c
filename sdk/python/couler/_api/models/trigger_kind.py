from typing import Literal

TriggerKind = Literal["api", "backfill", "schedule", "webhook"]

TRIGGER_KIND_VALUES: set[TriggerKind] = {
    "api",
    "backfill",
    "schedule",
    "webhook",
}


def check_trigger_kind(value: str) -> TriggerKind:
    if value in TRIGGER_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TRIGGER_KIND_VALUES!r}"
    )
