from typing import Literal

CacheScopeView = Literal["shared", "tenant"]

CACHE_SCOPE_VIEW_VALUES: set[CacheScopeView] = {
    "shared",
    "tenant",
}


def check_cache_scope_view(value: str) -> CacheScopeView:
    if value in CACHE_SCOPE_VIEW_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CACHE_SCOPE_VIEW_VALUES!r}"
    )
