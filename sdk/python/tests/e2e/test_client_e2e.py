"""`couler.Client` against a real `couler up`: workflows, runs (submit,
wait, events with resume, logs, cancel, retry), idempotent submits,
pagination, typed errors from problem documents, secrets, the cache, and
Argo imports."""

from __future__ import annotations

import itertools

import pytest

from couler import Client
from couler.errors import Invalid, NotFound, RunTimeout

_names = itertools.count()


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_names)}"


def two_steps(name: str, second: str = "echo two") -> dict:
    return {
        "apiVersion": "couler.dev/v1alpha1",
        "name": name,
        "parameters": [{"name": "who", "default": "world"}],
        "steps": [
            {"name": "one", "container": {"image": "alpine", "command": ["sh", "-c", "echo hello {{workflow.parameters.who}}"]}},
            {"name": "two", "depends": ["one"], "container": {"image": "alpine", "command": ["sh", "-c", second]}},
        ],
    }


def test_a_document_is_validated_offline_with_pointers(client: Client) -> None:
    with pytest.raises(Invalid) as caught:
        client.runs.submit(ir={"apiVersion": "couler.dev/v1alpha1", "name": "Bad Name", "steps": []})
    paths = {p.path for p in caught.value.problems}
    assert "/name" in paths and "/steps" in paths, caught.value


def test_yaml_documents_keep_on_as_a_key(client: Client) -> None:
    text = """
apiVersion: couler.dev/v1alpha1
name: retrying
steps:
  - name: once
    container: {image: alpine, command: [sh, -c, "true"]}
    retry: {limit: 2, on: transient}
"""
    assert client.validate(text)["steps"][0]["retry"] == {"limit": 2, "on": "transient"}


def test_submit_wait_logs_and_events(client: Client) -> None:
    run = client.runs.submit(ir=two_steps(unique("hello")), parameters={"who": "sdk"}, labels={"suite": "e2e"})
    done = client.runs.wait(run.id, timeout=120)
    assert done.status == "succeeded", (done.message, [(s.name, s.status, s.message) for s in done.steps])
    assert [s.status for s in done.steps] == ["succeeded", "succeeded"]
    assert "hello sdk" in client.runs.logs(run.id, "one")
    events = list(client.runs.events(run.id))
    assert events[-1].final and events[-1].status == "succeeded"
    # Resuming after an event gives exactly the ones after it.
    resumed = list(client.runs.events(run.id, after=events[1].id))
    assert [e.id for e in resumed] == [e.id for e in events[2:]]
    assert any(r.id == run.id for r in client.runs.list(label="suite=e2e"))


def test_errors_are_typed_problems(client: Client) -> None:
    with pytest.raises(NotFound) as caught:
        client.runs.get("run_00000000000000000000000000")
    assert caught.value.status == 404 and caught.value.code == "not_found"
    with pytest.raises(Invalid) as caught:
        client.runs.submit(ir=two_steps(unique("params")), parameters={"nobody": "x"})
    assert [p.path for p in caught.value.problems] == ["/parameters/nobody"]


def test_a_repeated_submit_with_one_key_runs_once(client: Client) -> None:
    doc = two_steps(unique("once"))
    key = unique("same-key")
    a = client.runs.submit(ir=doc, idempotency_key=key)
    b = client.runs.submit(ir=doc, idempotency_key=key)
    assert a.id == b.id
    assert client.runs.submit(ir=doc).id != a.id


def test_workflows_versions_and_pages(client: Client) -> None:
    name = unique("stored")
    created = client.workflows.create(two_steps(name))
    assert created.version.version == 1
    client.workflows.add_version(name, two_steps(name, second="echo changed"))
    assert [v.version for v in client.workflows.versions(name)] == [2, 1]
    assert client.workflows.get(name, version=1).version.version == 1
    for i in range(3):
        client.workflows.create(two_steps(f"{name}-page-{i}"))
    listed = [w.name for w in client.workflows.list(name=f"{name}-page-")]
    assert sorted(listed) == [f"{name}-page-{i}" for i in range(3)]
    run = client.runs.submit(name, parameters={"who": "stored"})
    assert client.runs.wait(run.id, timeout=120).status == "succeeded"
    client.workflows.delete(name)
    with pytest.raises(NotFound):
        client.workflows.get(name)


def test_cancel_and_retry(client: Client) -> None:
    run = client.runs.submit(ir=two_steps(unique("slow"), second="sleep 60"))
    with pytest.raises(RunTimeout):
        client.runs.wait(run.id, timeout=1)
    client.runs.cancel(run.id)
    assert client.runs.wait(run.id, timeout=60).status == "cancelled"
    again = client.runs.retry(run.id)
    assert again.attempt == 2
    client.runs.cancel(run.id)
    assert client.runs.wait(run.id, timeout=60).status == "cancelled"


def test_secrets_never_come_back(client: Client) -> None:
    name = unique("db")
    view = client.secrets.put(name, {"password": "hunter2"})
    assert view.keys == ["password"]
    assert "hunter2" not in str(client.secrets.get(name).to_dict())
    assert name in [s.name for s in client.secrets.list()]
    client.secrets.delete(name)
    with pytest.raises(NotFound):
        client.secrets.get(name)


def test_cache_explain_and_stats(client: Client) -> None:
    doc = two_steps(unique("cached"), second="echo explained")
    who = {"who": unique("explained")}
    explained = client.cache.explain(ir=doc, parameters=who)
    assert [s.step for s in explained.steps] == ["one", "two"]
    assert explained.steps[0].status == "miss", explained
    before = client.cache.stats()
    assert client.runs.wait(client.runs.submit(ir=doc, parameters=who).id, timeout=120).status == "succeeded"
    again = client.runs.wait(client.runs.submit(ir=doc, parameters=who).id, timeout=120)
    assert [s.status for s in again.steps] == ["cached", "cached"], again.steps
    assert client.cache.stats().hits >= before.hits + 2


ARGO = """
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: imported-}
spec:
  entrypoint: main
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
  templates:
    - name: main
      container: {image: alpine, command: [sh, -c, "echo imported"], volumeMounts: [{name: data, mountPath: /data}]}
"""


def test_an_argo_import_that_changes_the_run_is_refused_unless_accepted(client: Client) -> None:
    with pytest.raises(Invalid) as caught:
        client.workflows.import_argo(ARGO)
    assert caught.value.code == "import_changes_run"
    assert {p.code for p in caught.value.problems} >= {"volumes"}
    result = client.workflows.import_argo(ARGO, accept_changes=True, run={"labels": {"from": "argo"}})
    assert result.run is not None
    assert client.runs.wait(result.run.id, timeout=120).status == "succeeded"


def test_the_readmes_example_runs(server, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example under the README's "Python SDK" heading, as written."""
    import contextlib
    import io
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parents[4]
    readme = (repo / "README.md").read_text()
    section = readme.split("## Python SDK", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) <= 6, code
    monkeypatch.chdir(repo)
    monkeypatch.setenv("COULER_SERVER", server.url)
    monkeypatch.setenv("COULER_TOKEN", server.token)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().splitlines()[0] == "succeeded", out.getvalue()
    assert "A says hi" in out.getvalue()
