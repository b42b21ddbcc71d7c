from typing import Literal

CachePolicyType1 = Literal["off"]

CACHE_POLICY_TYPE_1_VALUES: set[CachePolicyType1] = {
    "off",
}


def check_cache_policy_type_1(value: str) -> CachePolicyType1:
    if value in CACHE_POLICY_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CACHE_POLICY_TYPE_1_VALUES!r}"
    )
