from typing import Literal

SecretAction = Literal["delete", "put"]

SECRET_ACTION_VALUES: set[SecretAction] = {
    "delete",
    "put",
}


def check_secret_action(value: str) -> SecretAction:
    if value in SECRET_ACTION_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SECRET_ACTION_VALUES!r}"
    )
