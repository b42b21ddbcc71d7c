from typing import Literal

StepNetworkSetting = Literal["default", "host", "none"]

STEP_NETWORK_SETTING_VALUES: set[StepNetworkSetting] = {
    "default",
    "host",
    "none",
}


def check_step_network_setting(value: str) -> StepNetworkSetting:
    if value in STEP_NETWORK_SETTING_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {STEP_NETWORK_SETTING_VALUES!r}"
    )
