from typing import Literal

StrategyType1 = Literal["halving"]

STRATEGY_TYPE_1_VALUES: set[StrategyType1] = {
    "halving",
}


def check_strategy_type_1(value: str) -> StrategyType1:
    if value in STRATEGY_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {STRATEGY_TYPE_1_VALUES!r}"
    )
