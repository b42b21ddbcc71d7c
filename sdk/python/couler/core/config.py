"""Workflow settings: `config_workflow` for this workflow, `config_defaults` for all."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from couler.core import states


def config_defaults(
    name_salter: Callable[[str], str] | None = None, service_account: str | None = None
) -> None:
    """`name_salter` rewrites every workflow name (e.g. to add a suffix)."""
    if name_salter is not None:
        states.defaults.name_salter = name_salter
    if service_account is not None:
        states.defaults.service_account = service_account


def config_workflow(
    name: str | None = None,
    user_id: str | None = None,
    timeout: int | None = None,
    time_to_clean: float | None = None,
    cluster_config_file: str | None = None,
    cron_config: dict[str, Any] | None = None,
    service_account: str | None = None,
) -> None:
    """Set what is given for the current workflow.

    `timeout` is the workflow's deadline in seconds; `time_to_clean` how long
    a finished run is kept; `cron_config` (`schedule`, `suspend`, …) makes it a
    CronWorkflow; `cluster_config_file` is a Python file whose `cluster` object
    rewrites the workflow spec (`config_workflow`) and each pod template
    (`config_pod`). `user_id` is kept but not emitted, as in Couler.
    """
    workflow = states.workflow
    if name is not None:
        workflow.name = name
    if user_id is not None:
        workflow.user_id = user_id
    if timeout is not None:
        workflow.timeout = timeout
    if time_to_clean is not None:
        workflow.time_to_clean = time_to_clean
    if cluster_config_file is not None:
        workflow.cluster_config = _load_cluster_config(cluster_config_file)
    if cron_config is not None:
        workflow.cron_config = dict(cron_config)
    if service_account is not None:
        workflow.service_account = service_account


def _load_cluster_config(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("couler_cluster_config", path)
    if spec is None or spec.loader is None:
        raise ValueError("cannot load the cluster config file %s" % path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cluster = getattr(module, "cluster", None)
    if cluster is None:
        raise ValueError("the cluster config file %s defines no `cluster` object" % path)
    return cluster
