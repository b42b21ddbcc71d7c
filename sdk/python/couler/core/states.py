"""The workflow the program is building; one per process, as in Couler.

Private names hold what `_cleanup()` resets (the upstream tests check that it
does). `workflow` is reset in place, so modules that imported it keep seeing
the current one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from couler.core.constants import OVERWRITE_GPU_ENVS
from couler.core.templates.output import Output
from couler.core.templates.secret import Secret
from couler.core.templates.workflow import Workflow



@dataclass
class Defaults:
    """Settings that outlive `_cleanup()`: every later workflow gets them."""

    name_salter: Callable[[str], str] | None = None
    service_account: str | None = None


workflow = Workflow()
defaults = Defaults()

# Secrets the workflow uses, by name.
_secrets: dict[str, Secret] = {}
# What each step returned, by step name (for implicit passing in a DAG).
_steps_outputs: dict[str, list[Output]] = {}
# The DSL calls being run (set_dependencies, when, concurrent, …), innermost last.
_scopes: list = []
# Whether steps that request no GPU get empty NVIDIA_* env vars.
_overwrite_nvidia_gpu_envs: bool = os.environ.get(OVERWRITE_GPU_ENVS, "").lower() in (
    "1",
    "true",
    "yes",
)


def workflow_yaml() -> dict[str, Any]:
    """The Argo Workflow (or CronWorkflow) built so far, as a dict."""
    return workflow.to_dict(
        name_salter=defaults.name_salter, default_service_account=defaults.service_account
    )


def get_secret(name: str) -> Secret | None:
    return _secrets.get(name)


def get_step_output(step_name: str) -> list[Output]:
    """What step `step_name` returned, to pass to a later step."""
    try:
        return _steps_outputs[step_name]
    except KeyError:
        raise ValueError("no step named %r has been defined" % step_name) from None


def _cleanup() -> None:
    """Start a new workflow."""
    global _secrets, _steps_outputs, _scopes
    workflow.cleanup()
    _secrets = {}
    _steps_outputs = {}
    _scopes = []
