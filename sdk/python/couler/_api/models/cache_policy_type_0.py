from typing import Literal

CachePolicyType0 = Literal["auto"]

CACHE_POLICY_TYPE_0_VALUES: set[CachePolicyType0] = {
    "auto",
}


def check_cache_policy_type_0(value: str) -> CachePolicyType0:
    if value in CACHE_POLICY_TYPE_0_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CACHE_POLICY_TYPE_0_VALUES!r}"
    )
