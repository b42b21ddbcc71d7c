"""`couler.run`, `couler.delete` and the default submitter."""

from __future__ import annotations

from typing import Any

from couler.argo_submitter import ArgoSubmitter
from couler.core import states
from couler.core.workflow_validation_utils import validate_workflow_yaml
from couler.couler_submitter import CoulerSubmitter, server_configured

Submitter = ArgoSubmitter | CoulerSubmitter


def set_default_submitter(submitter: Submitter | None = None) -> None:
    """The submitter `couler.run()` uses when given none."""
    if submitter is not None and not isinstance(submitter, (ArgoSubmitter, CoulerSubmitter)):
        raise ValueError("the default submitter must be an ArgoSubmitter or a CoulerSubmitter")
    ArgoSubmitter._default_submitter = submitter


def _submitter(submitter: Any) -> Submitter:
    if submitter is None:
        submitter = ArgoSubmitter._default_submitter
    if submitter is None:
        return CoulerSubmitter() if server_configured() else ArgoSubmitter()
    if isinstance(submitter, type) and issubclass(submitter, (ArgoSubmitter, CoulerSubmitter)):
        return submitter()
    if isinstance(submitter, (ArgoSubmitter, CoulerSubmitter)):
        return submitter
    raise ValueError(
        "couler.run takes an ArgoSubmitter or a CoulerSubmitter, not %r" % (submitter,)
    )


def run(submitter: Any = None) -> Any:
    """Submit the workflow built so far, then start a new one.

    Returns what the submitter returns: the created Argo Workflow, or on the
    control plane an Argo-like dict whose `metadata.name` is the run id.
    """
    chosen = _submitter(submitter)
    workflow = states.workflow_yaml()
    validate_workflow_yaml(workflow)
    result = chosen.submit(workflow, secrets=list(states._secrets.values()))
    states._cleanup()
    return result


def delete(
    name: str,
    namespace: str = "default",
    config_file: str | None = None,
    context: str | None = None,
    client_configuration: Any = None,
    persist_config: bool = True,
    grace_period_seconds: int = 5,
    propagation_policy: str = "Background",
) -> Any:
    """Delete workflow `name`; on the control plane, cancel run `name`."""
    if server_configured():
        return CoulerSubmitter(namespace=namespace).cancel(name)
    submitter = ArgoSubmitter(namespace, config_file, context, client_configuration, persist_config)
    return submitter.delete(name, grace_period_seconds, propagation_policy)
