from typing import Literal

CoulerWorkflowApiVersion = Literal["couler.dev/v1alpha1"]

COULER_WORKFLOW_API_VERSION_VALUES: set[CoulerWorkflowApiVersion] = {
    "couler.dev/v1alpha1",
}


def check_couler_workflow_api_version(value: str) -> CoulerWorkflowApiVersion:
    if value in COULER_WORKFLOW_API_VERSION_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {COULER_WORKFLOW_API_VERSION_VALUES!r}"
    )
