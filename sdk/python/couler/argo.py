"""The Couler DSL (`import couler.argo as couler`): build an Argo workflow, then run it.

Programs written for the open-source Couler SDK run unchanged. With
`COULER_SERVER` set they run on the Couler control plane; otherwise
`ArgoSubmitter` submits them to Argo Workflows on Kubernetes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from couler.core import states, utils
from couler.core.config import config_defaults, config_workflow
from couler.core.constants import (
    OVERWRITE_GPU_ENVS,
    ArtifactType,
    CronWorkflowCRD,
    ImagePullPolicy,
    WFStatus,
    WorkflowCRD,
)
from couler.core.run_templates import run_canned_step, run_container, run_job, run_script
from couler.core.states import _cleanup, get_secret, get_step_output, workflow, workflow_yaml
from couler.core.syntax import (
    add_image_pull_secret,
    add_toleration,
    add_volume,
    bigger,
    bigger_equal,
    concurrent,
    create_workflow_volume,
    dag,
    equal,
    exec_while,
    map,
    not_equal,
    set_dependencies,
    set_dns,
    set_exit_handler,
    smaller,
    smaller_equal,
    when,
)
from couler.core.templates import (
    Artifact,
    Cache,
    LocalArtifact,
    OssArtifact,
    S3Artifact,
    Secret,
)
from couler.core.workflow_validation_utils import validate_workflow_yaml
from couler.couler_submitter import CoulerSubmitter, ImportRefused, SubmitError
from couler.submit import delete, run, set_default_submitter


def init_yaml_dump() -> None:
    """Make `yaml.dump` write multi-line strings (scripts) as `|` blocks."""

    def represent_str(dumper: yaml.Dumper, data: str) -> yaml.ScalarNode:
        style = "|" if "\n" in data else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    yaml.add_representer(str, represent_str)


def create_parameter_artifact(path: str, is_global: bool = False) -> Artifact:
    """A file whose content becomes an output parameter of the step that writes it."""
    return Artifact(path=path, type=ArtifactType.PARAMETERS, is_global=is_global)


def create_local_artifact(path: str, is_global: bool = False) -> LocalArtifact:
    """A file kept in the workflow's artifact repository."""
    return LocalArtifact(path=path, is_global=is_global)


def create_oss_artifact(
    path: str,
    bucket: str | None = None,
    accesskey_id: str | None = None,
    accesskey_secret: str | None = None,
    key: str | None = None,
    endpoint: str | None = None,
    is_global: bool = False,
) -> OssArtifact:
    return OssArtifact(path, accesskey_id, accesskey_secret, bucket, key, endpoint, is_global)


def create_s3_artifact(
    path: str,
    bucket: str | None = None,
    accesskey_id: str | None = None,
    accesskey_secret: str | None = None,
    key: str | None = None,
    endpoint: str | None = None,
    is_global: bool = False,
    insecure: bool = False,
) -> S3Artifact:
    return S3Artifact(
        path, accesskey_id, accesskey_secret, bucket, key, endpoint, is_global, insecure
    )


def create_secret(
    secret_data: Mapping[str, str],
    namespace: str = "default",
    name: str | None = None,
    dry_run: bool = False,
    use_existing: bool = False,
    artifact_secret: bool = False,
) -> str:
    """A secret holding `secret_data`, made when the workflow is submitted; returns its name."""
    secret = Secret(namespace, secret_data, name, dry_run, use_existing, artifact_secret)
    states._secrets.setdefault(secret.name, secret)
    return secret.name


def obtain_secret(
    secret_keys: list[str],
    namespace: str = "default",
    name: str | None = None,
    dry_run: bool = False,
) -> str:
    """Refer to keys of an existing secret; returns its name."""
    if name is None:
        raise ValueError("obtain_secret needs the name of the existing secret")
    data = {key: "" for key in secret_keys}
    return create_secret(data, namespace, name, dry_run, use_existing=True)


__all__ = [
    "OVERWRITE_GPU_ENVS",
    "Artifact",
    "ArtifactType",
    "Cache",
    "CoulerSubmitter",
    "CronWorkflowCRD",
    "ImagePullPolicy",
    "ImportRefused",
    "LocalArtifact",
    "OssArtifact",
    "S3Artifact",
    "Secret",
    "SubmitError",
    "WFStatus",
    "WorkflowCRD",
    "_cleanup",
    "add_image_pull_secret",
    "add_toleration",
    "add_volume",
    "bigger",
    "bigger_equal",
    "concurrent",
    "config_defaults",
    "config_workflow",
    "create_local_artifact",
    "create_oss_artifact",
    "create_parameter_artifact",
    "create_s3_artifact",
    "create_secret",
    "create_workflow_volume",
    "dag",
    "delete",
    "equal",
    "exec_while",
    "get_secret",
    "get_step_output",
    "init_yaml_dump",
    "map",
    "not_equal",
    "obtain_secret",
    "run",
    "run_canned_step",
    "run_container",
    "run_job",
    "run_script",
    "set_default_submitter",
    "set_dependencies",
    "set_dns",
    "set_exit_handler",
    "smaller",
    "smaller_equal",
    "states",
    "utils",
    "validate_workflow_yaml",
    "when",
    "workflow",
    "workflow_yaml",
]
