from typing import Literal

Credential = Literal["api_key", "jwt"]

CREDENTIAL_VALUES: set[Credential] = {
    "api_key",
    "jwt",
}


def check_credential(value: str) -> Credential:
    if value in CREDENTIAL_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CREDENTIAL_VALUES!r}"
    )
