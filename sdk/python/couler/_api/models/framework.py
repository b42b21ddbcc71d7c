from typing import Literal

Framework = Literal["mpi", "pytorch", "tensorflow"]

FRAMEWORK_VALUES: set[Framework] = {
    "mpi",
    "pytorch",
    "tensorflow",
}


def check_framework(value: str) -> Framework:
    if value in FRAMEWORK_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {FRAMEWORK_VALUES!r}")
