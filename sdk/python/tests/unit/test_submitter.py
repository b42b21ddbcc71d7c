"""The submitters against an in-process fake of the control plane."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import httpx
import pytest
from fake_server import TOKEN, FakeControlPlane

import couler.argo as couler
from couler import argo_submitter, submit
from couler.argo_submitter import ArgoSubmitter
from couler.couler_submitter import CoulerSubmitter, ImportRefused, SubmitError

SERVER = "http://couler.test"


def hello() -> None:
    couler.run_container(image="docker/whalesay", command=["cowsay"], args=["hello", True])


def submitter(fake: FakeControlPlane, **kwargs) -> CoulerSubmitter:
    return CoulerSubmitter(SERVER, TOKEN, transport=fake.transport(), **kwargs)


def test_run_posts_the_round_tripped_workflow_and_returns_an_argo_like_workflow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_ids = tmp_path / "ids"
    monkeypatch.setenv("COULER_RUN_ID_FILE", str(run_ids))
    fake = FakeControlPlane()
    hello()
    wf = couler.run(submitter=submitter(fake, namespace="team-a"))

    (request,) = fake.requests
    assert (request.method, request.path) == ("POST", "/v1/workflows:import")
    assert request.headers["authorization"] == "Bearer " + TOKEN
    assert request.body["acceptChanges"] is False
    assert request.body["run"] == {"labels": {"couler.dev/namespace": "team-a"}}
    template = request.body["source"]["spec"]["templates"][1]
    # quotes the DSL put around references and booleans are gone, as in Argo
    assert template["container"]["args"] == [
        "{{inputs.parameters.para-hello-0}}",
        "{{inputs.parameters.para-hello-1}}",
    ]
    step = request.body["source"]["spec"]["templates"][0]["steps"][0][0]
    assert step["arguments"]["parameters"][1]["value"] == "True"
    assert wf == {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {
            "name": "run_1",
            "uid": "run_1",
            "namespace": "team-a",
            "labels": {"couler.dev/namespace": "team-a"},
        },
        "status": {"phase": "Pending"},
    }
    assert run_ids.read_text() == "run_1\n"
    # the workflow was submitted: the next one starts empty
    assert couler.workflow.templates == {}


def test_unsupported_features_that_do_not_change_the_run_are_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = FakeControlPlane(
        unsupported=[
            {
                "path": "/spec/dnsPolicy",
                "feature": "dns",
                "message": "the local engine has no pod DNS",
                "changesRun": False,
            }
        ]
    )
    hello()
    with caplog.at_level(logging.WARNING, logger="couler"):
        couler.run(submitter=submitter(fake))
    assert "/spec/dnsPolicy: dns ignored: the local engine has no pod DNS" in caplog.text


REFUSALS = [
    {"path": "/source/spec/volumes/0", "code": "volumes", "message": "volumes cannot be mounted"},
    {"path": "/source/spec/templates/1/memoize", "code": "memoize", "message": "dropped"},
]


def test_an_import_that_changes_the_run_is_refused_with_every_reason() -> None:
    fake = FakeControlPlane(refuse=REFUSALS)
    hello()
    with pytest.raises(ImportRefused) as refused:
        couler.run(submitter=submitter(fake))
    message = str(refused.value)
    assert "/source/spec/volumes/0: volumes cannot be mounted" in message
    assert "/source/spec/templates/1/memoize: dropped" in message
    assert "accept_changes=True" in message and "COULER_ACCEPT_CHANGES=1" in message
    assert refused.value.code == "import_changes_run"
    # nothing was lost: the same workflow can be submitted again, accepting the changes
    assert couler.run(submitter=submitter(fake, accept_changes=True))["metadata"]["name"] == "run_1"
    assert [r.body["acceptChanges"] for r in fake.imports()] == [False, True]


def test_accepting_changes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COULER_ACCEPT_CHANGES", "1")
    fake = FakeControlPlane(refuse=REFUSALS)
    hello()
    couler.run(submitter=submitter(fake))
    assert fake.imports()[0].body["acceptChanges"] is True


def test_other_errors_carry_the_problem_document() -> None:
    fake = FakeControlPlane()
    hello()
    with pytest.raises(SubmitError) as failed:
        couler.run(submitter=CoulerSubmitter(SERVER, "wrong", transport=fake.transport()))
    assert (failed.value.status, failed.value.code) == (401, "unauthorized")
    assert "no valid token" in str(failed.value)


def test_an_unreachable_server_is_a_clear_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    hello()
    with pytest.raises(SubmitError, match="cannot reach the control plane at http://couler.test"):
        couler.run(submitter=CoulerSubmitter(SERVER, TOKEN, transport=httpx.MockTransport(refuse)))


def test_secrets_the_program_creates_are_stored_first() -> None:
    fake = FakeControlPlane()
    made = couler.create_secret({"user": "abc", "password": "def"})
    existing = couler.obtain_secret(["token"], name="prod-token")
    couler.run_container(image="python:3.11", command="env", secret=made)
    couler.run_container(image="python:3.11", command="env", secret=existing)
    couler.run(submitter=submitter(fake))
    put, imported = fake.requests
    assert (put.method, put.path) == ("PUT", "/v1/secrets/%s" % made)
    assert put.body == {"data": {"user": "abc", "password": "def"}}
    assert imported.path == "/v1/workflows:import"


def test_argo_submitter_runs_on_the_control_plane_when_couler_server_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeControlPlane()
    monkeypatch.setenv("COULER_SERVER", SERVER + "/")
    monkeypatch.setenv("COULER_TOKEN", TOKEN)
    monkeypatch.setattr(
        argo_submitter,
        "CoulerSubmitter",
        lambda namespace: CoulerSubmitter(namespace=namespace, transport=fake.transport()),
    )
    hello()
    wf = couler.run(submitter=ArgoSubmitter(namespace="argo", config_file="/nonexistent"))
    assert wf["metadata"]["namespace"] == "argo"
    assert fake.imports()[0].body["run"]["labels"] == {"couler.dev/namespace": "argo"}


def test_run_without_a_submitter_uses_the_control_plane(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeControlPlane()
    monkeypatch.setenv("COULER_SERVER", SERVER)
    monkeypatch.setenv("COULER_TOKEN", TOKEN)
    monkeypatch.setattr(
        submit, "CoulerSubmitter", lambda: CoulerSubmitter(transport=fake.transport())
    )
    monkeypatch.setattr(ArgoSubmitter, "_default_submitter", None)
    hello()
    assert couler.run()["metadata"]["name"] == "run_1"


def test_delete_cancels_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeControlPlane()
    monkeypatch.setenv("COULER_SERVER", SERVER)
    monkeypatch.setattr(
        submit,
        "CoulerSubmitter",
        lambda namespace: CoulerSubmitter(token=TOKEN, transport=fake.transport()),
    )
    assert couler.delete("run_7") == {"id": "run_7", "state": "cancelled"}
    assert [(r.method, r.path) for r in fake.requests] == [("POST", "/v1/runs/run_7/cancel")]


def test_argo_submitter_needs_kubernetes_without_couler_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    with pytest.raises(RuntimeError, match="needs the 'kubernetes' package.*COULER_SERVER"):
        ArgoSubmitter()


def test_run_refuses_other_submitters() -> None:
    hello()
    with pytest.raises(ValueError, match="ArgoSubmitter or a CoulerSubmitter"):
        couler.run(submitter=object())


def test_workflow_names_are_checked_as_kubernetes_names() -> None:
    fake = FakeControlPlane()
    couler.config_workflow(name="Not_Valid")
    hello()
    with pytest.raises(ValueError, match="lower-case"):
        ArgoSubmitter.check_name("Not_Valid")
    # CoulerSubmitter leaves names to the control plane
    couler.run(submitter=submitter(fake))
    assert fake.imports()[0].body["source"]["metadata"] == {"name": "Not_Valid"}
