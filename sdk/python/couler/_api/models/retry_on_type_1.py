from typing import Literal

RetryOnType1 = Literal["transient"]

RETRY_ON_TYPE_1_VALUES: set[RetryOnType1] = {
    "transient",
}


def check_retry_on_type_1(value: str) -> RetryOnType1:
    if value in RETRY_ON_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RETRY_ON_TYPE_1_VALUES!r}"
    )
