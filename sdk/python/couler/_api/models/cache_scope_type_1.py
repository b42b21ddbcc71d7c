from typing import Literal

CacheScopeType1 = Literal["tenant"]

CACHE_SCOPE_TYPE_1_VALUES: set[CacheScopeType1] = {
    "tenant",
}


def check_cache_scope_type_1(value: str) -> CacheScopeType1:
    if value in CACHE_SCOPE_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CACHE_SCOPE_TYPE_1_VALUES!r}"
    )
