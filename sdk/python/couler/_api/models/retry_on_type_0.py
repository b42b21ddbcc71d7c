from typing import Literal

RetryOnType0 = Literal["always"]

RETRY_ON_TYPE_0_VALUES: set[RetryOnType0] = {
    "always",
}


def check_retry_on_type_0(value: str) -> RetryOnType0:
    if value in RETRY_ON_TYPE_0_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RETRY_ON_TYPE_0_VALUES!r}"
    )
