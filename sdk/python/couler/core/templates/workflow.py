"""The workflow being built, and how it renders to an Argo Workflow or CronWorkflow."""

from __future__ import annotations

import copy
import posixpath
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from couler.core import utils
from couler.core.constants import CronWorkflowCRD, WorkflowCRD
from couler.core.templates.dns import DnsConfig
from couler.core.templates.image_pull_secret import ImagePullSecret
from couler.core.templates.step import Step
from couler.core.templates.template import Template
from couler.core.templates.toleration import Toleration
from couler.core.templates.volume import Volume
from couler.core.templates.volume_claim import VolumeClaimTemplate

EXIT_HANDLER = "exit-handler"

# What a CronWorkflow gets unless `cron_config` says otherwise.
CRON_DEFAULTS: dict[str, Any] = {
    "concurrencyPolicy": "Allow",
    "failedJobsHistoryLimit": 1,
    "startingDeadlineSeconds": 10,
    "successfulJobsHistoryLimit": 3,
    "timezone": "Asia/Shanghai",
}


class Workflow:
    """Templates, steps and workflow-wide settings of the program's workflow."""

    def __init__(self) -> None:
        self.cleanup()

    def cleanup(self) -> None:
        """Forget everything: the next call starts a new workflow."""
        self.name: str | None = None
        self.user_id: str | None = None
        self.timeout: int | None = None
        self.time_to_clean: float | None = None
        self.cluster_config: Any = None
        self.cron_config: dict[str, Any] | None = None
        self.service_account: str | None = None
        self.security_context: dict[str, Any] | None = None
        self.templates: OrderedDict[str, Template] = OrderedDict()
        self.steps: list[list[Step]] = []
        self.tasks: OrderedDict[str, Step] = OrderedDict()
        self.dag_mode = False
        self.exit_steps: list[Step] = []
        self.volumes: list[Volume] = []
        self.volume_claims: list[VolumeClaimTemplate] = []
        self.tolerations: list[Toleration] = []
        self.image_pull_secrets: list[ImagePullSecret] = []
        self.dns_policy: str | None = None
        self.dns_config: DnsConfig | None = None
        self.output_dirs: OrderedDict[str, str] = OrderedDict()
        self.concurrent_tasks = 0

    # -- building ------------------------------------------------------------

    def get_template(self, name: str) -> Template | None:
        return self.templates.get(name)

    def add_template(self, template: Template) -> None:
        """Add a template; one already there under that name is kept."""
        self.templates.setdefault(template.name, template)

    def output_volume(self, path: str) -> str | None:
        """The emptyDir volume mounted at the directory of an output file."""
        directory = posixpath.dirname(path)
        if directory in ("", "/"):
            return None
        if directory not in self.output_dirs:
            self.output_dirs[directory] = "couler-out-dir-%d" % len(self.output_dirs)
        return self.output_dirs[directory]

    def add_volume(self, volume: Volume) -> None:
        if all(existing.name != volume.name for existing in self.volumes):
            self.volumes.append(volume)

    def add_volume_claim(self, claim: VolumeClaimTemplate) -> None:
        if all(existing.claim_name != claim.claim_name for existing in self.volume_claims):
            self.volume_claims.append(claim)

    def set_security_context(self, security_context: dict[str, Any] | None) -> None:
        self.security_context = security_context

    def get_steps_dict(self) -> list[list[OrderedDict]]:
        return [[step.to_step_dict() for step in group] for group in self.steps]

    # -- rendering -----------------------------------------------------------

    def to_dict(
        self,
        name_salter: Callable[[str], str] | None = None,
        default_service_account: str | None = None,
    ) -> OrderedDict:
        entry = self.name or utils.argo_safe_name(utils.workflow_filename()) or "workflow"
        spec = self._spec(entry, default_service_account)
        name = self.name
        if name is not None and name_salter is not None:
            name = name_salter(name)
        if self.cron_config is not None:
            return self._cron_workflow(name or entry, spec)
        metadata = {"name": name} if name else {"generateName": entry + "-"}
        return OrderedDict(
            [
                ("apiVersion", WorkflowCRD.API_VERSION),
                ("kind", WorkflowCRD.KIND),
                ("metadata", metadata),
                ("spec", spec),
            ]
        )

    def _cron_workflow(self, name: str, spec: OrderedDict) -> OrderedDict:
        cron: dict[str, Any] = dict(CRON_DEFAULTS)
        for key, value in (self.cron_config or {}).items():
            cron[_camel_case(key)] = value
        cron["workflowSpec"] = spec
        return OrderedDict(
            [
                ("apiVersion", CronWorkflowCRD.API_VERSION),
                ("kind", CronWorkflowCRD.KIND),
                ("metadata", {"name": name}),
                ("spec", OrderedDict(sorted(cron.items()))),
            ]
        )

    def _spec(self, entry: str, default_service_account: str | None) -> OrderedDict:
        spec: dict[str, Any] = {
            "entrypoint": entry,
            "templates": self._templates(entry),
        }
        if self.exit_steps:
            spec["onExit"] = EXIT_HANDLER
        volumes = [volume.to_dict() for volume in self.volumes] + [
            {"emptyDir": {}, "name": name} for name in self.output_dirs.values()
        ]
        if volumes:
            spec["volumes"] = volumes
        if self.volume_claims:
            spec["volumeClaimTemplates"] = [claim.to_dict() for claim in self.volume_claims]
        if self.tolerations:
            spec["tolerations"] = [toleration.to_dict() for toleration in self.tolerations]
        if self.image_pull_secrets:
            spec["imagePullSecrets"] = [secret.to_dict() for secret in self.image_pull_secrets]
        if self.dns_policy is not None:
            spec["dnsPolicy"] = self.dns_policy
        if self.dns_config is not None:
            spec["dnsConfig"] = self.dns_config.to_dict()
        service_account = self.service_account or default_service_account
        if service_account is not None:
            spec["serviceAccountName"] = service_account
        if self.security_context is not None:
            spec["securityContext"] = copy.deepcopy(self.security_context)
        if self.timeout is not None:
            spec["activeDeadlineSeconds"] = self.timeout
        if self.time_to_clean is not None:
            spec["ttlStrategy"] = {"secondsAfterCompletion": int(self.time_to_clean)}
        ordered = OrderedDict(sorted(spec.items()))
        if self.cluster_config is not None:
            ordered = self.cluster_config.config_workflow(ordered)
        return ordered

    def _templates(self, entry: str) -> list[OrderedDict]:
        templates = [self._entry_template(entry)]
        for template in self.templates.values():
            body = template.to_dict()
            if template.pod and self.cluster_config is not None:
                body = self.cluster_config.config_pod(body)
            templates.append(body)
        if self.exit_steps:
            templates.append(
                {
                    "name": EXIT_HANDLER,
                    "steps": [[step.to_step_dict()] for step in self.exit_steps],
                }
            )
        return templates

    def _entry_template(self, entry: str) -> OrderedDict:
        if self.dag_mode:
            tasks = [task.to_task_dict() for task in self.tasks.values()]
            return OrderedDict([("name", entry), ("dag", {"tasks": tasks})])
        return OrderedDict([("name", entry), ("steps", self.get_steps_dict())])


def _camel_case(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
