from typing import Literal

CatchupPolicy = Literal["all", "latest", "skip"]

CATCHUP_POLICY_VALUES: set[CatchupPolicy] = {
    "all",
    "latest",
    "skip",
}


def check_catchup_policy(value: str) -> CatchupPolicy:
    if value in CATCHUP_POLICY_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CATCHUP_POLICY_VALUES!r}"
    )
