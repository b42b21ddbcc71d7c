"""DSL behaviour the Couler SDK's own tests leave out."""

from __future__ import annotations

import pyaml
import pytest
import yaml

import couler.argo as couler
from couler.core import yaml_roundtrip
from couler.steps import katib, pytorch, tensorflow


def whalesay(message: object) -> list:
    return couler.run_container(image="docker/whalesay", command=["cowsay"], args=[message])


def flip() -> list:
    return couler.run_script(image="python:3.11", source="print('heads')")


def templates() -> dict:
    return {t["name"]: t for t in couler.workflow_yaml()["spec"]["templates"]}


def test_module_level_steps_are_named_after_the_file_and_line() -> None:
    namespace: dict = {"couler": couler}
    code = compile(
        'couler.run_container(image="alpine", command=["true"])\n', "/work/my_flow.py", "exec"
    )
    exec(code, namespace)
    wf = couler.workflow_yaml()
    step = wf["spec"]["templates"][0]["steps"][0][0]
    assert step == {"name": "my-flow-1", "template": "my-flow-1"}
    assert wf["spec"]["templates"][1]["name"] == "my-flow-1"


def test_workflow_deadline_retention_retry_timeout_and_cache() -> None:
    couler.config_workflow(name="nightly", timeout=600, time_to_clean=90.5)
    couler.run_container(
        image="alpine",
        command=["true"],
        timeout=30,
        retry=2,
        cache=couler.Cache(name="cm", key="k1", max_age="1h"),
    )
    wf = couler.workflow_yaml()
    assert wf["metadata"] == {"name": "nightly"}
    assert wf["spec"]["activeDeadlineSeconds"] == 600
    assert wf["spec"]["ttlStrategy"] == {"secondsAfterCompletion": 90}
    template = wf["spec"]["templates"][1]
    assert template["activeDeadlineSeconds"] == 30
    assert template["retryStrategy"] == {"limit": 2, "retryPolicy": "Always"}
    assert template["memoize"] == {"key": "k1", "maxAge": "1h", "cache": {"configMap": {"name": "cm"}}}
    with pytest.raises(ValueError, match="retry must be an int"):
        couler.run_container(image="alpine", retry="3")


def test_gpu_resources_are_nvidia_gpus() -> None:
    couler.run_container(image="cuda", resources={"cpu": 2, "GPU": 1})
    resources = couler.workflow_yaml()["spec"]["templates"][1]["container"]["resources"]
    assert resources == {
        "requests": {"cpu": 2, "nvidia.com/gpu": 1},
        "limits": {"cpu": 2, "nvidia.com/gpu": 1},
    }


def test_when_in_a_dag_depends_on_the_tested_step() -> None:
    couler.set_dependencies(lambda: whalesay("start"), dependencies=None)
    result = couler.set_dependencies(lambda: flip(), dependencies=["whalesay-%d" % 0])
    couler.set_dependencies(
        lambda: couler.when(couler.not_equal(result, "tails"), lambda: whalesay(result)),
        dependencies=["never-used"],
    )
    tasks = couler.workflow_yaml()["spec"]["templates"][0]["dag"]["tasks"]
    conditional = tasks[-1]
    assert conditional["when"] == "{{tasks.%s.outputs.result}} != tails" % tasks[1]["name"]
    assert conditional["dependencies"] == [tasks[1]["name"]]
    assert conditional["arguments"]["parameters"][0]["value"] == (
        '"{{tasks.%s.outputs.result}}"' % tasks[1]["name"]
    )


def test_map_in_a_dag_and_exec_while_in_steps() -> None:
    couler.set_dependencies(lambda: couler.map(lambda m: whalesay(m), ["a", "b"]), None)
    task = couler.workflow_yaml()["spec"]["templates"][0]["dag"]["tasks"][0]
    assert task["withItems"] == [{"para-whalesay-0": "a"}, {"para-whalesay-0": "b"}]
    couler._cleanup()
    couler.exec_while(couler.not_equal("heads"), flip)
    loop = templates()["exec-while-flip"]
    assert loop["steps"][1][0]["when"].endswith(".outputs.result}} != heads")


def test_a_cron_workflow_keeps_what_cron_config_sets() -> None:
    whalesay("tick")
    couler.config_workflow(
        name="ticker", cron_config={"schedule": "*/5 * * * *", "concurrency_policy": "Forbid"}
    )
    wf = couler.workflow_yaml()
    assert wf["kind"] == "CronWorkflow"
    assert wf["spec"]["concurrencyPolicy"] == "Forbid"
    assert wf["spec"]["schedule"] == "*/5 * * * *"
    assert wf["spec"]["workflowSpec"]["entrypoint"] == "ticker"


def test_training_jobs_give_each_role_its_image_and_command() -> None:
    tensorflow.train(
        image="tf:2",
        command=["python", "train.py"],
        num_ps=1,
        num_workers=2,
        ps_image="tf-ps:2",
        worker_command=["python", "worker.py"],
    )
    manifest = yaml.safe_load(templates()["test-training-jobs-give-each-role-its-image-and-command"]["resource"]["manifest"])
    specs = manifest["spec"]["tfReplicaSpecs"]
    assert set(specs) == {"PS", "Worker"}
    assert specs["PS"]["template"]["spec"]["containers"][0]["image"] == "tf-ps:2"
    assert specs["Worker"]["template"]["spec"]["containers"][0]["command"] == ["python", "worker.py"]
    couler._cleanup()
    pytorch.train(image="pt:2", command=["python", "t.py"], num_workers=0)
    (template,) = [t for t in couler.workflow_yaml()["spec"]["templates"][1:]]
    assert template["resource"]["successCondition"] == "status.replicaStatuses.Master.succeeded == 1"


def test_katib_experiment() -> None:
    katib.run(
        raw_template="apiVersion: batch/v1\nkind: Job\n",
        tuning_params=[{"name": "lr", "type": "double", "range": [0.01, 0.1]}],
        objective={"type": "maximize", "goal": 0.9, "metric_name": "accuracy"},
    )
    resource = templates()["run"]["resource"]
    experiment = yaml.safe_load(resource["manifest"])
    assert experiment["kind"] == "Experiment"
    assert experiment["spec"]["parameters"] == [
        {"name": "--lr", "parameterType": "double", "feasibleSpace": {"min": "0.01", "max": "0.1"}}
    ]
    assert resource["successCondition"] == "status.trialsSucceeded >= 9"


def test_canned_steps_say_they_cannot_run() -> None:
    with pytest.raises(NotImplementedError, match="no Argo form"):
        couler.run_canned_step(name="x", args={})


WORKFLOWS = [
    lambda: whalesay("hello world"),
    lambda: whalesay(flip()),
    lambda: couler.run_container(
        image="alpine",
        command=["sh", "-c", "echo '#1: ok' && exit 0"],
        env={"N": 1234, "FLAG": False, "EMPTY": "", "DASH": "-", "COLON": "key:"},
    ),
    lambda: couler.run_script(image="python", source="import sys\nprint(sys.argv)\n"),
]


@pytest.mark.parametrize("build", WORKFLOWS)
def test_the_round_trip_is_the_couler_sdks(build) -> None:
    """The submitter's YAML round trip gives what pyaml's gave (what Argo saw)."""
    build()
    wf = couler.workflow_yaml()
    assert yaml_roundtrip.roundtrip(wf) == yaml.safe_load(pyaml.dump(wf))
