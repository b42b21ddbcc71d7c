from typing import Literal

StrategyType2 = Literal["llm"]

STRATEGY_TYPE_2_VALUES: set[StrategyType2] = {
    "llm",
}


def check_strategy_type_2(value: str) -> StrategyType2:
    if value in STRATEGY_TYPE_2_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {STRATEGY_TYPE_2_VALUES!r}"
    )
