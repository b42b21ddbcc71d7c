"""What the Kubeflow training-job steps share: replica specs and the resource step."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from couler.core import states
from couler.core.run_templates import run_job_as
from couler.core.utils import CallSite
from couler.core.templates.output import Output

API_VERSION = "kubeflow.org/v1"


def parse_resources(resources: str | dict[str, Any] | None) -> dict[str, Any] | None:
    """`"cpu=0.5,memory=1024"` (or a dict) as a resources dict, numbers as numbers."""
    if resources is None or isinstance(resources, dict):
        return resources
    parsed: dict[str, Any] = {}
    for part in resources.split(","):
        if not part.strip():
            continue
        key, _, value = part.partition("=")
        parsed[key.strip()] = _number(value.strip())
    return parsed


def _number(value: str) -> Any:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def secret_env(secret: str | None) -> list[dict[str, Any]]:
    if secret is None:
        return []
    found = states.get_secret(secret)
    if found is None:
        raise ValueError("unknown secret %r: make it with couler.create_secret" % secret)
    return found.to_env_list()


def replica(
    container_name: str,
    replicas: int,
    image: str | None,
    command: Any,
    resources: str | dict[str, Any] | None,
    restart_policy: str | None,
    secret: str | None,
) -> dict[str, Any]:
    """One role of a training job: `replicas` pods of one container."""
    if image is None:
        raise ValueError("the %s replicas need an image" % container_name)
    container: dict[str, Any] = {"name": container_name, "image": image}
    if command:
        # each role its own copy: a shared list would become a YAML alias
        container["command"] = copy.deepcopy(command)
    env = secret_env(secret)
    if env:
        container["env"] = env
    amounts = parse_resources(resources)
    if amounts:
        container["resources"] = {"requests": dict(amounts), "limits": dict(amounts)}
    spec: dict[str, Any] = {"replicas": replicas}
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    spec["template"] = {"spec": {"containers": [container]}}
    return spec


def run_training_job(
    site: CallSite,
    kind: str,
    replica_key: str,
    replicas: dict[str, dict[str, Any]],
    clean_pod_policy: str,
    timeout: int | None,
    step_name: str | None,
) -> list[Output]:
    """Create the job as a resource step that ends with its workers (or its only role)."""
    if not replicas:
        raise ValueError("a %s needs at least one replica" % kind)
    role = "Worker" if "Worker" in replicas else next(iter(replicas))
    count = replicas[role]["replicas"]
    manifest = {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": {"generateName": "%s-" % (step_name or site.name).lower()},
        "spec": {"cleanPodPolicy": clean_pod_policy, replica_key: replicas},
    }
    return run_job_as(
        site,
        yaml.safe_dump(manifest, sort_keys=False),
        success_condition="status.replicaStatuses.%s.succeeded == %d" % (role, count),
        failure_condition="status.replicaStatuses.%s.failed > 0" % role,
        timeout=timeout,
        step_name=step_name,
    )
