from typing import Literal

StepTemplateKind = Literal[
    "deploy",
    "distributed_train",
    "ensemble",
    "evaluate",
    "export",
    "features",
    "load",
    "notify",
    "predict",
    "preprocess",
    "quality_check",
    "register",
    "report",
    "select",
    "shell",
    "train",
]

STEP_TEMPLATE_KIND_VALUES: set[StepTemplateKind] = {
    "deploy",
    "distributed_train",
    "ensemble",
    "evaluate",
    "export",
    "features",
    "load",
    "notify",
    "predict",
    "preprocess",
    "quality_check",
    "register",
    "report",
    "select",
    "shell",
    "train",
}


def check_step_template_kind(value: str) -> StepTemplateKind:
    if value in STEP_TEMPLATE_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {STEP_TEMPLATE_KIND_VALUES!r}"
    )
