"""Hyperparameter tuning as a Katib Experiment step."""

from __future__ import annotations

from typing import Any

import yaml

from couler.core.run_templates import run_job
from couler.core.templates.output import Output


def run(
    raw_template: str,
    tuning_params: list[dict[str, Any]],
    objective: dict[str, Any],
    success_condition: str | None = None,
    failure_condition: str | None = None,
    algorithm: str = "random",
    parallel_trial_count: int = 3,
    max_trial_count: int = 12,
    max_failed_trial_count: int = 3,
) -> list[Output]:
    """Run trials of `raw_template` (a Go-templated Job) over `tuning_params`.

    `tuning_params` items are `{"name", "type", "range": [min, max]}`;
    `objective` is `{"type": "maximize"|"minimize", "goal", "metric_name"}`.
    By default the step succeeds once enough trials succeeded and fails once
    too many failed.
    """
    experiment = {
        "apiVersion": "kubeflow.org/v1alpha3",
        "kind": "Experiment",
        "metadata": {"generateName": "katib-experiment-"},
        "spec": {
            "parallelTrialCount": parallel_trial_count,
            "maxTrialCount": max_trial_count,
            "maxFailedTrialCount": max_failed_trial_count,
            "objective": {
                "type": objective["type"],
                "goal": objective["goal"],
                "objectiveMetricName": objective["metric_name"],
            },
            "algorithm": {"algorithmName": algorithm},
            "parameters": [_parameter(param) for param in tuning_params],
            "trialTemplate": {"goTemplate": {"rawTemplate": raw_template}},
        },
    }
    return run_job(
        manifest=yaml.safe_dump(experiment, sort_keys=False),
        success_condition=success_condition
        or "status.trialsSucceeded >= %d" % (max_trial_count - max_failed_trial_count),
        failure_condition=failure_condition
        or "status.trialsFailed >= %d" % max(max_failed_trial_count, 1),
    )


def _parameter(param: dict[str, Any]) -> dict[str, Any]:
    low, high = param["range"]
    return {
        "name": "--%s" % param["name"],
        "parameterType": param["type"],
        "feasibleSpace": {"min": str(low), "max": str(high)},
    }
