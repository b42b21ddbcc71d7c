from typing import Literal

ImportFormat = Literal["argo"]

IMPORT_FORMAT_VALUES: set[ImportFormat] = {
    "argo",
}


def check_import_format(value: str) -> ImportFormat:
    if value in IMPORT_FORMAT_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {IMPORT_FORMAT_VALUES!r}"
    )
