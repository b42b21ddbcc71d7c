from typing import Literal

StrategyType0 = Literal["grid", "random"]

STRATEGY_TYPE_0_VALUES: set[StrategyType0] = {
    "grid",
    "random",
}


def check_strategy_type_0(value: str) -> StrategyType0:
    if value in STRATEGY_TYPE_0_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {STRATEGY_TYPE_0_VALUES!r}"
    )
