"""Checks a workflow dict before it is submitted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def validate_workflow_yaml(original_wf: Mapping[str, Any]) -> None:
    """Raise if the workflow has no templates, or an entry template with no steps."""
    wf = dict(original_wf)
    if wf.get("kind") == "CronWorkflow":
        spec = (wf.get("spec") or {}).get("workflowSpec") or {}
        if not spec.get("templates"):
            raise ValueError("CronWorkflow yaml must contain spec.workflowSpec.templates")
    else:
        spec = wf.get("spec") or {}
        if not spec.get("templates"):
            raise ValueError("Workflow yaml must contain spec.templates")
    entry = spec["templates"][0]
    if "steps" in entry and not entry["steps"]:
        raise ValueError("At least one step definition must exist in steps")
    if "dag" in entry and not (entry["dag"] or {}).get("tasks"):
        raise ValueError("At least one task definition must exist in dag.tasks")
