"""Distributed TensorFlow training as a Kubeflow TFJob step."""

from __future__ import annotations

from typing import Any

from couler.core import utils
from couler.core.templates.output import Output
from couler.steps._training import replica, run_training_job


def train(
    image: str | None = None,
    command: Any = "",
    secret: str | None = None,
    no_chief: bool = True,
    chief_image: str | None = None,
    chief_resources: Any = None,
    chief_restart_policy: str = "Never",
    chief_command: Any = None,
    num_ps: int = 0,
    ps_image: str | None = None,
    ps_resources: Any = None,
    ps_restart_policy: str = "Never",
    ps_command: Any = None,
    num_workers: int = 0,
    worker_image: str | None = None,
    worker_resources: Any = None,
    worker_restart_policy: str = "Never",
    worker_command: Any = None,
    num_evaluators: int = 0,
    evaluator_image: str | None = None,
    evaluator_resources: Any = None,
    evaluator_restart_policy: str = "Never",
    evaluator_command: Any = None,
    clean_pod_policy: str = "Running",
    timeout: int | None = None,
    step_name: str | None = None,
) -> list[Output]:
    """A TFJob with a chief (unless `no_chief`), parameter servers, workers and evaluators.

    Each role's image, command and resources (`"cpu=1,memory=2048"` or a
    dict) default to `image` and `command`.
    """
    site = utils.call_site()
    roles = [
        ("Chief", 0 if no_chief else 1, chief_image, chief_command, chief_resources, chief_restart_policy),
        ("PS", num_ps, ps_image, ps_command, ps_resources, ps_restart_policy),
        ("Worker", num_workers, worker_image, worker_command, worker_resources, worker_restart_policy),
        ("Evaluator", num_evaluators, evaluator_image, evaluator_command, evaluator_resources, evaluator_restart_policy),
    ]
    replicas = {
        role: replica(
            "tensorflow", count, role_image or image, role_command or command, resources, policy, secret
        )
        for role, count, role_image, role_command, resources, policy in roles
        if count > 0
    }
    return run_training_job(
        site, "TFJob", "tfReplicaSpecs", replicas, clean_pod_policy, timeout, step_name
    )
