"""Distributed training with MPI as a Kubeflow MPIJob step."""

from __future__ import annotations

from typing import Any

from couler.core import utils
from couler.core.templates.output import Output
from couler.steps._training import replica, run_training_job


def train(
    image: str | None = None,
    command: Any = "",
    secret: str | None = None,
    launcher_image: str | None = None,
    launcher_resources: Any = None,
    launcher_command: Any = None,
    num_workers: int = 0,
    worker_image: str | None = None,
    worker_resources: Any = None,
    worker_command: Any = None,
    clean_pod_policy: str = "Running",
    timeout: int | None = None,
    step_name: str | None = None,
) -> list[Output]:
    """An MPIJob with one launcher and `num_workers` workers."""
    site = utils.call_site()
    replicas = {
        "Launcher": replica(
            "mpi",
            1,
            launcher_image or image,
            launcher_command or command,
            launcher_resources,
            None,
            secret,
        )
    }
    if num_workers > 0:
        replicas["Worker"] = replica(
            "mpi",
            num_workers,
            worker_image or image,
            worker_command or command,
            worker_resources,
            None,
            secret,
        )
    return run_training_job(
        site, "MPIJob", "mpiReplicaSpecs", replicas, clean_pod_policy, timeout, step_name
    )
