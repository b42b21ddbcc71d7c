from typing import Literal

DeliveryOutcome = Literal["ignored", "queued", "rejected"]

DELIVERY_OUTCOME_VALUES: set[DeliveryOutcome] = {
    "ignored",
    "queued",
    "rejected",
}


def check_delivery_outcome(value: str) -> DeliveryOutcome:
    if value in DELIVERY_OUTCOME_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {DELIVERY_OUTCOME_VALUES!r}"
    )
