from typing import Literal

ParamKind = Literal["categorical", "double", "int"]

PARAM_KIND_VALUES: set[ParamKind] = {
    "categorical",
    "double",
    "int",
}


def check_param_kind(value: str) -> ParamKind:
    if value in PARAM_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {PARAM_KIND_VALUES!r}"
    )
