"""Every program of the corpus (examples/, integration_tests/) runs unchanged.

Each runs as a subprocess with COULER_SERVER pointing at a fake control
plane on a loopback port; the test checks what the program submitted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus import corpus_dir, programs, run_program
from fake_server import TOKEN, FakeControlPlane

PROGRAMS = programs()

pytestmark = pytest.mark.skipif(not PROGRAMS, reason="no Couler corpus at %s" % corpus_dir())


@pytest.fixture()
def plane() -> Iterator[tuple[FakeControlPlane, str]]:
    fake = FakeControlPlane()
    server = fake.serve()
    try:
        yield fake, "http://127.0.0.1:%d" % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


# How many workflows each program submits (the others submit one).
SUBMISSIONS = {
    "examples/default_submitter.py": 2,
    "integration_tests/mpi_example.py": 2,
}


@pytest.mark.parametrize("program", PROGRAMS)
def test_program_runs_unchanged(
    program: str, plane: tuple[FakeControlPlane, str], tmp_path: Path
) -> None:
    fake, url = plane
    done, run_ids = run_program(program, url, TOKEN, tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    imports = fake.imports()
    assert len(imports) == SUBMISSIONS.get(program, 1)
    assert run_ids == ["run_%d" % i for i in range(1, len(imports) + 1)]
    for request in imports:
        assert request.headers["authorization"] == "Bearer " + TOKEN
        assert set(request.body) == {"source", "acceptChanges", "run"}
        assert request.body["acceptChanges"] is False
        assert request.body["source"]["apiVersion"] == "argoproj.io/v1alpha1"
    CHECKS[program]([r.body for r in imports], done.stdout)


def _templates(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in body["source"]["spec"]["templates"]}


def check_hello_world(bodies: list[dict[str, Any]], out: str) -> None:
    (body,) = bodies
    source = body["source"]
    assert source["metadata"] == {"generateName": "hello-world-"}
    entry = source["spec"]["templates"][0]
    step = entry["steps"][0][0]
    assert step["arguments"]["parameters"] == [
        {"name": "para-hello-world-4-0", "value": "hello world"}
    ]
    # the round trip took the DSL's quotes off the reference
    assert _templates(body)["hello-world-4"]["container"]["args"] == [
        "{{inputs.parameters.para-hello-world-4-0}}"
    ]


def check_dag(bodies: list[dict[str, Any]], out: str) -> None:
    (body,) = bodies
    tasks = body["source"]["spec"]["templates"][0]["dag"]["tasks"]
    assert [(t["name"], t.get("dependencies")) for t in tasks] == [
        ("A", None),
        ("B", ["A"]),
        ("C", ["A"]),
        ("D", ["B"]),
    ]


def check_coin_flip(bodies: list[dict[str, Any]], out: str) -> None:
    (body,) = bodies
    groups = body["source"]["spec"]["templates"][0]["steps"]
    assert [len(group) for group in groups] == [1, 2]
    flip = groups[0][0]["name"]
    assert [s["when"] for s in groups[1]] == [
        "{{steps.%s.outputs.result}} == heads" % flip,
        "{{steps.%s.outputs.result}} == tails" % flip,
    ]


def check_default_submitter(bodies: list[dict[str, Any]], out: str) -> None:
    namespaces = [b["run"]["labels"]["couler.dev/namespace"] for b in bodies]
    assert namespaces == ["my_namespace", "other_namespace"]
    # the second workflow is a new one: one step each
    assert [len(b["source"]["spec"]["templates"][0]["steps"]) for b in bodies] == [1, 1]


def check_depends(bodies: list[dict[str, Any]], out: str) -> None:
    (body,) = bodies
    tasks = {t["name"]: t for t in body["source"]["spec"]["templates"][0]["dag"]["tasks"]}
    assert "depends" not in tasks["task1"]
    assert tasks["task2"]["depends"] == "task1.Failed"
    assert tasks["allfail"]["depends"] == (
        "task1.Failed && task2.Failed && task3.Failed && task4.Failed"
    )
    assert tasks["anysucceeded"]["depends"].startswith("task1.Succeeded || ")


def check_dag_depends(bodies: list[dict[str, Any]], out: str) -> None:
    (body,) = bodies
    tasks = {t["name"]: t for t in body["source"]["spec"]["templates"][0]["dag"]["tasks"]}
    assert tasks["should-execute-1"]["depends"] == "A && (C.Succeeded || C.Failed)"
    assert tasks["should-execute-2"]["depends"] == "B || C"
    assert body["source"]["spec"]["activeDeadlineSeconds"] == 3600
    assert body["run"]["labels"] == {"couler.dev/namespace": "argo"}
    assert "Workflow run_1 has been submitted" in out


def check_security_context(bodies: list[dict[str, Any]], out: str) -> None:
    (body,) = bodies
    spec = body["source"]["spec"]
    assert body["source"]["metadata"] == {"name": "flip-coin-sc-python"}
    assert spec["securityContext"] == {"seLinuxOptions": {"level": "s0:c123,c456"}}
    assert spec["ttlStrategy"] == {"secondsAfterCompletion": 5400}


def check_mpi(bodies: list[dict[str, Any]], out: str) -> None:
    names = [b["source"]["metadata"]["name"] for b in bodies]
    assert names == ["mpijob-go", "mpijob-python"]
    for body in bodies:
        resource = body["source"]["spec"]["templates"][1]["resource"]
        assert "kind: MPIJob" in resource["manifest"]
        assert resource["setOwnerReference"] is True


def check_volume(bodies: list[dict[str, Any]], out: str) -> None:
    (body,) = bodies
    container = body["source"]["spec"]["templates"][1]["container"]
    assert container["volumeMounts"] == [{"name": "apppath", "mountPath": "/tmp"}]


def check_node_assign(bodies: list[dict[str, Any]], out: str) -> None:
    (body,) = bodies
    spec = body["source"]["spec"]
    assert spec["tolerations"] == [{"key": "<key>", "effect": "<effect>", "operator": "<operator>"}]
    assert _templates(body)["Whale-Noise"]["nodeSelector"] == {"<key>": "<value>"}
    # not a valid label value as written; the submitter keeps what it can
    assert body["run"]["labels"] == {"couler.dev/namespace": "nodepool_namespace"}


CHECKS = {
    "examples/hello_world.py": check_hello_world,
    "examples/coin_flip.py": check_coin_flip,
    "examples/dag.py": check_dag,
    "examples/default_submitter.py": check_default_submitter,
    "examples/depends.py": check_depends,
    "examples/node_assign.py": check_node_assign,
    "integration_tests/dag_depends_example.py": check_dag_depends,
    "integration_tests/flip_coin_security_context_example.py": check_security_context,
    "integration_tests/mpi_example.py": check_mpi,
    "integration_tests/volume_example.py": check_volume,
}


def test_every_program_is_checked() -> None:
    assert set(PROGRAMS) == set(CHECKS)
