"""Distributed PyTorch training as a Kubeflow PyTorchJob step."""

from __future__ import annotations

from typing import Any

from couler.core import utils
from couler.core.templates.output import Output
from couler.steps._training import replica, run_training_job


def train(
    image: str | None = None,
    command: Any = "",
    secret: str | None = None,
    master_image: str | None = None,
    master_resources: Any = None,
    master_restart_policy: str = "Never",
    master_command: Any = None,
    num_workers: int = 0,
    worker_image: str | None = None,
    worker_resources: Any = None,
    worker_restart_policy: str = "Never",
    worker_command: Any = None,
    clean_pod_policy: str = "Running",
    timeout: int | None = None,
    step_name: str | None = None,
) -> list[Output]:
    """A PyTorchJob with one master and `num_workers` workers."""
    site = utils.call_site()
    replicas = {
        "Master": replica(
            "pytorch",
            1,
            master_image or image,
            master_command or command,
            master_resources,
            master_restart_policy,
            secret,
        )
    }
    if num_workers > 0:
        replicas["Worker"] = replica(
            "pytorch",
            num_workers,
            worker_image or image,
            worker_command or command,
            worker_resources,
            worker_restart_policy,
            secret,
        )
    return run_training_job(
        site, "PyTorchJob", "pytorchReplicaSpecs", replicas, clean_pod_policy, timeout, step_name
    )
