"""`ArgoSubmitter`, as Couler programs construct it.

With `COULER_SERVER` set, it hands the workflow to the Couler control plane
(`CoulerSubmitter`) whatever its arguments. Otherwise it submits to Argo
Workflows on the Kubernetes cluster of the kubeconfig, as the Couler SDK
does, which needs the `kubernetes` package.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from couler.core import yaml_roundtrip
from couler.core.constants import CronWorkflowCRD, WorkflowCRD
from couler.core.templates.secret import Secret
from couler.couler_submitter import CoulerSubmitter, server_configured

# Couler programs set this to pick the Couler SDK's Go or Python submitter;
# here both submit the same way.
_SUBMITTER_IMPL_ENV_VAR_KEY = "SUBMITTER_IMPLEMENTATION"

logger = logging.getLogger("couler")


class _SubmitterImplTypes:
    PYTHON = "Python"
    GO = "Go"


def _import_kubernetes() -> ModuleType:
    try:
        import kubernetes
    except ImportError:
        raise RuntimeError(
            "ArgoSubmitter submits to Argo Workflows on Kubernetes, which needs the "
            "'kubernetes' package (pip install 'couler-sdk[kubernetes]'). To run the "
            "workflow on the Couler control plane instead, set COULER_SERVER "
            "(and COULER_TOKEN)."
        ) from None
    return kubernetes


class ArgoSubmitter:
    """Submits workflows to Argo in `namespace` (or, with `COULER_SERVER`, to Couler)."""

    # What `couler.run()` uses when given no submitter (`set_default_submitter`).
    _default_submitter: Any = None

    def __init__(
        self,
        namespace: str = "default",
        config_file: str | None = None,
        context: str | None = None,
        client_configuration: Any = None,
        persist_config: bool = True,
    ):
        self.namespace = namespace
        self._couler: CoulerSubmitter | None = None
        if server_configured():
            self._couler = CoulerSubmitter(namespace=namespace)
            return
        if os.environ.get(_SUBMITTER_IMPL_ENV_VAR_KEY) == _SubmitterImplTypes.GO:
            logger.info("couler: the Go submitter is not available; submitting from Python")
        kubernetes = _import_kubernetes()
        kubernetes.config.load_kube_config(
            config_file=config_file,
            context=context,
            client_configuration=client_configuration,
            persist_config=persist_config,
        )
        self._kubernetes = kubernetes

    @staticmethod
    def check_name(name: str) -> None:
        """Raise unless `name` is a valid workflow name (a DNS-1123 label)."""
        if not name or len(name) > 63:
            raise ValueError("workflow name %r must have 1 to 63 characters" % name)
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name):
            raise ValueError(
                "workflow name %r must be lower-case letters, digits and '-', "
                "starting and ending with a letter or digit" % name
            )

    def get_custom_object_api_client(self) -> Any:
        return self._kubernetes.client.CustomObjectsApi()

    def get_core_api_client(self) -> Any:
        return self._kubernetes.client.CoreV1Api()

    def submit(
        self, workflow_yaml: Mapping[str, Any], secrets: Iterable[Secret] | None = None
    ) -> dict[str, Any]:
        metadata = workflow_yaml.get("metadata", {})
        self.check_name(metadata.get("name") or metadata.get("generateName", "").rstrip("-"))
        if self._couler is not None:
            return self._couler.submit(workflow_yaml, secrets)
        for secret in secrets or []:
            self._create_secret(secret)
        crd = CronWorkflowCRD if workflow_yaml.get("kind") == CronWorkflowCRD.KIND else WorkflowCRD
        return self.get_custom_object_api_client().create_namespaced_custom_object(
            crd.GROUP,
            crd.VERSION,
            self.namespace,
            crd.PLURAL,
            yaml_roundtrip.roundtrip(workflow_yaml),
        )

    def _create_secret(self, secret: Secret) -> None:
        if secret.use_existing or secret.dry_run:
            return
        manifest = yaml_roundtrip.roundtrip(secret.to_yaml())
        core = self.get_core_api_client()
        try:
            core.create_namespaced_secret(self.namespace, manifest)
        except self._kubernetes.client.rest.ApiException as error:
            if error.status != 409:  # the same data made it before: same name
                raise

    def delete(self, name: str, grace_period_seconds: int = 5, propagation_policy: str = "Background") -> Any:
        """Delete workflow `name` (on Couler: cancel run `name`)."""
        if self._couler is not None:
            return self._couler.cancel(name)
        body = self._kubernetes.client.V1DeleteOptions(
            grace_period_seconds=grace_period_seconds, propagation_policy=propagation_policy
        )
        return self.get_custom_object_api_client().delete_namespaced_custom_object(
            WorkflowCRD.GROUP,
            WorkflowCRD.VERSION,
            self.namespace,
            WorkflowCRD.PLURAL,
            name,
            body,
        )
