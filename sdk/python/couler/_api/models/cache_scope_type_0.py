from typing import Literal

CacheScopeType0 = Literal["shared"]

CACHE_SCOPE_TYPE_0_VALUES: set[CacheScopeType0] = {
    "shared",
}


def check_cache_scope_type_0(value: str) -> CacheScopeType0:
    if value in CACHE_SCOPE_TYPE_0_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CACHE_SCOPE_TYPE_0_VALUES!r}"
    )
