"""Constants of the Couler DSL, as the open-source Couler SDK names them."""

# Set to "true" to give every step that requests no GPU empty NVIDIA_* env
# vars, so a GPU node's runtime does not expose its GPUs to it.
OVERWRITE_GPU_ENVS = "COULER_OVERWRITE_GPU_ENVS"


class WFStatus:
    """Workflow statuses an exit handler can run on."""

    Succeeded = "Succeeded"
    Failed = "Failed"
    Error = "Error"


class ImagePullPolicy:
    IfNotPresent = "IfNotPresent"
    Always = "Always"
    Never = "Never"

    @classmethod
    def valid(cls, value: str) -> bool:
        return value in (cls.IfNotPresent, cls.Always, cls.Never)


class ArtifactType:
    """Artifact kinds; also the key of the storage block in an Argo artifact."""

    PARAMETERS = "parameters"
    LOCAL = "local"
    OSS = "oss"
    S3 = "s3"


class WorkflowCRD:
    API_VERSION = "argoproj.io/v1alpha1"
    KIND = "Workflow"
    PLURAL = "workflows"
    GROUP = "argoproj.io"
    VERSION = "v1alpha1"


class CronWorkflowCRD:
    API_VERSION = "argoproj.io/v1alpha1"
    KIND = "CronWorkflow"
    PLURAL = "cronworkflows"
    GROUP = "argoproj.io"
    VERSION = "v1alpha1"


# Argo's result of a step: what a script prints, what a container writes to stdout.
STEP_RESULT = "result"
