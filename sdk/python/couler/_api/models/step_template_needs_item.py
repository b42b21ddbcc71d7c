from typing import Literal

StepTemplateNeedsItem = Literal[
    "best",
    "command",
    "data",
    "message",
    "model",
    "model_uri",
    "models",
    "scores",
    "source",
    "target",
    "webhook",
]

STEP_TEMPLATE_NEEDS_ITEM_VALUES: set[StepTemplateNeedsItem] = {
    "best",
    "command",
    "data",
    "message",
    "model",
    "model_uri",
    "models",
    "scores",
    "source",
    "target",
    "webhook",
}


def check_step_template_needs_item(value: str) -> StepTemplateNeedsItem:
    if value in STEP_TEMPLATE_NEEDS_ITEM_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {STEP_TEMPLATE_NEEDS_ITEM_VALUES!r}"
    )
