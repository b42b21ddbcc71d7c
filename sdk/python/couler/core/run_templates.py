"""The step functions: run a container, a script or a Kubernetes resource.

Each call adds (once) a template named after the calling function, or after
`step_name`, and a step `<template>-<caller line>` that uses it. Arguments
become the template's input parameters `para-<template>-<i>`; outputs of
earlier steps among them become references (and, for artifacts, input
artifacts). Each returns the step's outputs, for later steps to take.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from couler.core import states, step_update, utils
from couler.core.constants import ArtifactType, ImagePullPolicy
from couler.core.templates.artifact import Artifact
from couler.core.templates.cache import Cache
from couler.core.templates.output import (
    Output,
    OutputArtifact,
    OutputJob,
    OutputParameter,
    OutputScript,
    declared,
)
from couler.core.templates.secret import Secret
from couler.core.templates.step import Step
from couler.core.templates.template import Template
from couler.core.templates.volume import VolumeMount

_NVIDIA_ENVS = ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")


def run_container(
    image: str,
    command: str | list[str] | None = None,
    args: Any = None,
    output: Artifact | list[Artifact] | None = None,
    input: Artifact | list[Artifact] | None = None,
    env: Mapping[str, Any] | None = None,
    env_from: list[dict] | None = None,
    secret: str | Secret | None = None,
    resources: Mapping[str, Any] | None = None,
    timeout: int | None = None,
    retry: int | None = None,
    step_name: str | None = None,
    image_pull_policy: str | None = None,
    pool: str | None = None,
    enable_ulogfs: bool = True,
    daemon: bool = False,
    volume_mounts: list[VolumeMount] | None = None,
    working_dir: str | None = None,
    node_selector: dict[str, str] | None = None,
    cache: Cache | None = None,
    parallelism: int | None = None,
) -> list[Output]:
    """Run `image` as a step. `pool` and `enable_ulogfs` are accepted and ignored."""
    site = utils.call_site()
    pod = _Pod(
        kind="container",
        image=image,
        command=_as_list(command),
        args=args,
        source=None,
        output=output,
        input=input,
        env=env,
        env_from=env_from,
        secret=secret,
        resources=resources,
        image_pull_policy=image_pull_policy,
        volume_mounts=volume_mounts,
        working_dir=working_dir,
    )
    extras = _TemplateExtras(daemon, node_selector, timeout, retry, cache, parallelism)
    return _run_pod(site, step_name, pod, extras)


def run_script(
    image: str,
    command: str | list[str] | None = None,
    source: str | Callable[..., Any] | None = None,
    args: Any = None,
    output: Artifact | list[Artifact] | None = None,
    input: Artifact | list[Artifact] | None = None,
    env: Mapping[str, Any] | None = None,
    secret: str | Secret | None = None,
    resources: Mapping[str, Any] | None = None,
    timeout: int | None = None,
    retry: int | None = None,
    step_name: str | None = None,
    image_pull_policy: str | None = None,
    pool: str | None = None,
    enable_ulogfs: bool = True,
    daemon: bool = False,
    volume_mounts: list[VolumeMount] | None = None,
    working_dir: str | None = None,
    node_selector: dict[str, str] | None = None,
    cache: Cache | None = None,
) -> list[Output]:
    """Run `source` (code, or a function whose body is sent) with `command` (default python)."""
    if source is None:
        raise ValueError("run_script needs a source: a string of code or a function")
    site = utils.call_site()
    pod = _Pod(
        kind="script",
        image=image,
        command=_as_list(command) or ["python"],
        args=args,
        source=source if isinstance(source, str) else utils.body(source),
        output=output,
        input=input,
        env=env,
        env_from=None,
        secret=secret,
        resources=resources,
        image_pull_policy=image_pull_policy,
        volume_mounts=volume_mounts,
        working_dir=working_dir,
    )
    extras = _TemplateExtras(daemon, node_selector, timeout, retry, cache, None)
    return _run_pod(site, step_name, pod, extras)


def run_job(
    manifest: str | Mapping[str, Any] | None,
    success_condition: str,
    failure_condition: str,
    timeout: int | None = None,
    retry: int | None = None,
    step_name: str | None = None,
    pool: str | None = None,
    env: Mapping[str, Any] | None = None,
    action: str = "create",
    set_owner_reference: bool = True,
    cache: Cache | None = None,
) -> list[Output]:
    """Create a Kubernetes object from `manifest` and wait for a condition on it."""
    site = utils.call_site()
    return run_job_as(
        site,
        manifest,
        success_condition,
        failure_condition,
        timeout=timeout,
        retry=retry,
        step_name=step_name,
        env=env,
        action=action,
        set_owner_reference=set_owner_reference,
        cache=cache,
    )


def run_canned_step(
    name: str,
    args: Mapping[str, Any],
    inputs: Any = None,
    outputs: Any = None,
    step_name: str | None = None,
    cache: Cache | None = None,
) -> None:
    """Canned steps exist only in the Couler SDK's protobuf IR, which has no Argo form."""
    raise NotImplementedError(
        "run_canned_step(%r): canned steps have no Argo form and cannot run here; "
        "use run_container or run_script" % name
    )


# -- shared machinery ---------------------------------------------------------


@dataclass
class _Pod:
    kind: str
    image: str
    command: list[str] | None
    args: Any
    source: str | None
    output: Artifact | list[Artifact] | None
    input: Artifact | list[Artifact] | None
    env: Mapping[str, Any] | None
    env_from: list[dict] | None
    secret: str | Secret | None
    resources: Mapping[str, Any] | None
    image_pull_policy: str | None
    volume_mounts: list[VolumeMount] | None
    working_dir: str | None


@dataclass
class _TemplateExtras:
    daemon: bool
    node_selector: dict[str, str] | None
    timeout: int | None
    retry: int | None
    cache: Cache | None
    parallelism: int | None

    def __post_init__(self) -> None:
        _check_retry(self.retry)

    def add_to(self, body: OrderedDict) -> None:
        if self.node_selector:
            body["nodeSelector"] = dict(self.node_selector)
        _add_timeout_and_retry(body, self.timeout, self.retry)
        if self.cache is not None:
            body["memoize"] = self.cache.to_dict()
        if self.parallelism is not None:
            body["parallelism"] = self.parallelism


@dataclass
class _Arguments:
    """A call's arguments as the template's inputs and the step's arguments."""

    input_parameters: list[dict] = field(default_factory=list)
    input_artifacts: list[OrderedDict] = field(default_factory=list)
    parameters: list[dict] = field(default_factory=list)
    artifacts: list[dict] = field(default_factory=list)
    container_args: list[str] = field(default_factory=list)

    def step_arguments(self) -> OrderedDict | None:
        arguments: OrderedDict = OrderedDict()
        if self.artifacts:
            arguments["artifacts"] = self.artifacts
        if self.parameters:
            arguments["parameters"] = self.parameters
        return arguments or None


def _names(step_name: str | None, site: utils.CallSite) -> tuple[str, str]:
    """(template name, step name) of a call."""
    if step_name is not None:
        safe = utils.argo_safe_name(step_name) or ""
        return safe, step_update.step_name(safe, generated=False)
    name = site.name if site.module_level else "%s-%d" % (site.name, site.line)
    return site.name, step_update.step_name(name, generated=True)


def _run_pod(
    site: utils.CallSite, step_name: str | None, pod: _Pod, extras: _TemplateExtras
) -> list[Output]:
    template_name, name = _names(step_name, site)
    existing = step_update.existing_task(name)
    if existing is not None:
        return existing.outputs
    arguments = _resolve(template_name, _flatten(pod.args) + _implicit_inputs(pod.args))
    input_artifacts = arguments.input_artifacts + [
        _used(artifact).to_dict() for artifact in _artifacts(pod.input)
    ]
    output_artifacts = [_used(artifact) for artifact in _artifacts(pod.output)]
    if states.workflow.get_template(template_name) is None:
        body: OrderedDict = OrderedDict([("name", template_name)])
        if extras.daemon:
            body["daemon"] = True
        inputs = _inputs(arguments.input_parameters, input_artifacts)
        if inputs:
            body["inputs"] = inputs
        body[pod.kind] = _pod_spec(pod, arguments.container_args, output_artifacts)
        outputs = _outputs(output_artifacts)
        if outputs:
            body["outputs"] = outputs
        extras.add_to(body)
        states.workflow.add_template(Template(template_name, body))
    results: list[Output] = [
        OutputParameter(name, template_name, artifact.id, artifact.is_global)
        if artifact.type == ArtifactType.PARAMETERS
        else OutputArtifact(name, template_name, artifact)
        for artifact in output_artifacts
    ] or [OutputScript(name, template_name)]
    _add(Step(name, template_name, arguments=arguments.step_arguments(), outputs=results))
    return results


def run_job_as(
    site: utils.CallSite,
    manifest: str | Mapping[str, Any] | None,
    success_condition: str,
    failure_condition: str,
    timeout: int | None = None,
    retry: int | None = None,
    step_name: str | None = None,
    env: Mapping[str, Any] | None = None,
    action: str = "create",
    set_owner_reference: bool = True,
    cache: Cache | None = None,
) -> list[Output]:
    """`run_job` for the call at `site` (the `couler.steps` libraries name it after their caller)."""
    if manifest is None:
        raise ValueError("run_job needs a manifest")
    _check_retry(retry)
    template_name, name = _names(step_name, site)
    existing = step_update.existing_task(name)
    if existing is not None:
        return existing.outputs
    prefix = step_update.reference_prefix()
    env_list = utils.convert_dict_to_env_list(env or {})
    for index, output in enumerate(_reference_outputs(_implicit_inputs(None))):
        env_list.append(
            {"name": "couler.inferred_outputs.%d" % index, "value": output.reference(prefix)}
        )
    if states.workflow.get_template(template_name) is None:
        resource = OrderedDict(
            [
                ("action", action),
                ("setOwnerReference", "true" if set_owner_reference else "false"),
                ("successCondition", success_condition),
                ("failureCondition", failure_condition),
                ("manifest", _manifest_with_env(manifest, env_list)),
            ]
        )
        body = OrderedDict(
            [
                ("name", template_name),
                ("resource", resource),
                ("outputs", {"parameters": _JOB_OUTPUTS}),
            ]
        )
        _add_timeout_and_retry(body, timeout, retry)
        if cache is not None:
            body["memoize"] = cache.to_dict()
        states.workflow.add_template(Template(template_name, body))
    results: list[Output] = [OutputJob(name, template_name)]
    _add(Step(name, template_name, outputs=results))
    return results


_JOB_OUTPUTS = [
    {"name": "job-name", "valueFrom": {"jsonPath": '"{.metadata.name}"'}},
    {"name": "job-id", "valueFrom": {"jsonPath": '"{.metadata.uid}"'}},
    {"name": "job-obj", "valueFrom": {"jqFilter": '"."'}},
]


def _add(step: Step) -> None:
    step_update.add_step(step)
    states._steps_outputs[step.name] = step.outputs


def _manifest_with_env(manifest: str | Mapping[str, Any], env: list[dict]) -> str:
    if not env:
        return manifest if isinstance(manifest, str) else yaml.safe_dump(dict(manifest))
    body = yaml.safe_load(manifest) if isinstance(manifest, str) else dict(manifest)
    spec = body.setdefault("spec", {})
    spec["env"] = list(spec.get("env") or []) + env
    return yaml.safe_dump(body, sort_keys=False)


def _add_timeout_and_retry(body: OrderedDict, timeout: int | None, retry: int | None) -> None:
    if timeout is not None:
        body["activeDeadlineSeconds"] = timeout
    if retry is not None:
        body["retryStrategy"] = OrderedDict([("limit", retry), ("retryPolicy", "Always")])


def _check_retry(retry: int | None) -> None:
    if retry is not None and (isinstance(retry, bool) or not isinstance(retry, int)):
        raise ValueError("retry must be an int (the number of retries), not %r" % (retry,))


def _as_list(command: str | list[str] | None) -> list[str] | None:
    if command is None:
        return None
    return [command] if isinstance(command, str) else list(command)


def _flatten(args: Any) -> list[Any]:
    if args is None:
        return []
    if not isinstance(args, (list, tuple)):
        return [args]
    flat: list[Any] = []
    for arg in args:
        flat.extend(_flatten(arg) if isinstance(arg, (list, tuple)) else [arg])
    return flat


def _artifacts(value: Artifact | list[Artifact] | None) -> list[Artifact]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _used(artifact: Artifact) -> Artifact:
    """Record the secret an artifact store needs, as the workflow now uses it."""
    if not isinstance(artifact, Artifact):
        raise TypeError("expected an artifact (couler.create_*_artifact), got %r" % (artifact,))
    secret = artifact.secret
    if secret is not None:
        states._secrets.setdefault(secret.name, secret)
    return artifact


def _implicit_inputs(explicit: Any) -> list[Output]:
    """Declared outputs of the steps this DAG task depends on, not already passed."""
    passed = {
        output.reference("steps") for output in _flatten(explicit) if isinstance(output, Output)
    }
    implicit: list[Output] = []
    for dependency in step_update.dag_dependencies():
        for output in declared(states._steps_outputs.get(dependency)):
            if output.reference("steps") not in passed:
                passed.add(output.reference("steps"))
                implicit.append(output)
    return implicit


def _reference_outputs(items: list[Any]) -> list[Any]:
    """Expand a job's outputs into its three parameters."""
    expanded: list[Any] = []
    for item in items:
        expanded.extend(item.parameters() if isinstance(item, OutputJob) else [item])
    return expanded


def _resolve(template_name: str, items: list[Any]) -> _Arguments:
    prefix = step_update.reference_prefix()
    mapped = step_update.map_scope()
    resolved = _Arguments()
    for index, item in enumerate(_reference_outputs(items)):
        param = "para-%s-%d" % (template_name, index)
        if isinstance(item, OutputArtifact):
            resolved.input_artifacts.append(item.artifact.to_dict())
            resolved.artifacts.append({"from": '"%s"' % item.reference(prefix), "name": item.artifact.id})
            continue
        if isinstance(item, Output):
            value = '"%s"' % item.reference(prefix)
        elif isinstance(item, step_update.MapItem) and mapped is not None:
            mapped.params[item.index] = param
            value = '"{{item.%s}}"' % param
        else:
            value = utils.literal_value(item)
        resolved.input_parameters.append({"name": param})
        resolved.parameters.append({"name": param, "value": value})
        resolved.container_args.append('"{{inputs.parameters.%s}}"' % param)
    return resolved


def _inputs(parameters: list[dict], artifacts: list[OrderedDict]) -> OrderedDict:
    inputs: OrderedDict = OrderedDict()
    if parameters:
        inputs["parameters"] = parameters
    if artifacts:
        inputs["artifacts"] = artifacts
    return inputs


def _outputs(artifacts: list[Artifact]) -> OrderedDict:
    outputs: OrderedDict = OrderedDict()
    parameters = [a.to_dict() for a in artifacts if a.type == ArtifactType.PARAMETERS]
    stored = [a.to_dict() for a in artifacts if a.type != ArtifactType.PARAMETERS]
    if parameters:
        outputs["parameters"] = parameters
    if stored:
        outputs["artifacts"] = stored
    return outputs


def _pod_spec(pod: _Pod, container_args: list[str], outputs: list[Artifact]) -> OrderedDict:
    spec = OrderedDict([("image", pod.image)])
    if pod.command:
        spec["command"] = pod.command
    if container_args:
        spec["args"] = container_args
    if pod.source is not None:
        spec["source"] = pod.source
    env = _env(pod)
    if env:
        spec["env"] = env
    if pod.env_from:
        spec["envFrom"] = list(pod.env_from)
    if pod.resources:
        spec["resources"] = _resources(pod.resources)
    mounts = _volume_mounts(pod.volume_mounts, outputs)
    if mounts:
        spec["volumeMounts"] = mounts
    if pod.working_dir is not None:
        spec["workingDir"] = pod.working_dir
    if pod.image_pull_policy is not None:
        if not ImagePullPolicy.valid(pod.image_pull_policy):
            raise ValueError("unknown image_pull_policy %r" % pod.image_pull_policy)
        spec["imagePullPolicy"] = pod.image_pull_policy
    return spec


def _env(pod: _Pod) -> list[dict]:
    env = utils.convert_dict_to_env_list(pod.env or {})
    if pod.secret is not None:
        env.extend(_secret(pod.secret).to_env_list())
    if states._overwrite_nvidia_gpu_envs and not utils.gpu_requested(pod.resources):
        env.extend({"name": name, "value": ""} for name in _NVIDIA_ENVS)
    return env


def _secret(secret: str | Secret) -> Secret:
    if isinstance(secret, Secret):
        states._secrets.setdefault(secret.name, secret)
        return secret
    found = states.get_secret(secret)
    if found is None:
        raise ValueError(
            "unknown secret %r: make it with couler.create_secret or couler.obtain_secret" % secret
        )
    return found


def _resources(resources: Mapping[str, Any]) -> OrderedDict:
    amounts = OrderedDict(
        ("nvidia.com/gpu" if key.strip().lower() == "gpu" else key, value)
        for key, value in resources.items()
    )
    return OrderedDict([("requests", amounts), ("limits", OrderedDict(amounts))])


def _volume_mounts(mounts: list[VolumeMount] | None, outputs: list[Artifact]) -> list[OrderedDict]:
    result = [mount.to_dict() for mount in mounts or []]
    names = {mount["name"] for mount in result}
    for artifact in outputs:
        volume = states.workflow.output_volume(artifact.path)
        if volume is not None and volume not in names:
            names.add(volume)
            result.append(OrderedDict([("name", volume), ("mountPath", _directory(artifact.path))]))
    return result


def _directory(path: str) -> str:
    return path.rsplit("/", 1)[0]
