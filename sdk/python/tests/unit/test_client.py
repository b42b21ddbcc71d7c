"""`couler.Client` without a server: configuration from the environment,
retries that are safe, problem documents as typed errors, server-sent
events parsing."""

from __future__ import annotations

import json

import httpx
import pytest

from couler import Client
from couler.client import _sse
from couler.errors import Conflict, CoulerAPIError, Invalid

RUN = {
    "id": "run_1",
    "workflow_name": "w",
    "ir_hash": "h",
    "status": "queued",
    "parameters": {},
    "labels": {},
    "priority": 0,
    "attempt": 1,
    "created_by": "me",
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
    "queued_at": "2026-01-01T00:00:00Z",
    "cancel_requested": False,
    "trigger": {"kind": "api"},
    "steps": [],
}


def client_with(handler, **kwargs) -> Client:
    return Client("http://couler.test", "ck_token", transport=httpx.MockTransport(handler), **kwargs)


def test_server_and_token_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COULER_SERVER", raising=False)
    monkeypatch.delenv("COULER_TOKEN", raising=False)
    with pytest.raises(ValueError, match="COULER_SERVER"):
        Client()
    monkeypatch.setenv("COULER_SERVER", "http://env.test/")
    with pytest.raises(ValueError, match="COULER_TOKEN"):
        Client()
    monkeypatch.setenv("COULER_TOKEN", "ck_env")
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((str(request.url), request.headers["authorization"]))
        return httpx.Response(200, json=RUN)

    with Client(transport=httpx.MockTransport(handler)) as c:
        assert c.runs.get("run_1").id == "run_1"
    assert seen == [("http://env.test/v1/runs/run_1", "Bearer ck_env")]


def test_reads_and_keyed_writes_are_retried_after_retry_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("couler.client.time.sleep", lambda s: None)
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append((request.method, request.headers.get("idempotency-key")))
        if len(calls) % 2 == 1:
            return httpx.Response(429, headers={"Retry-After": "1"}, json={"code": "rate_limited", "detail": "slow"})
        return httpx.Response(201 if request.method == "POST" else 200, json=RUN)

    c = client_with(handler)
    assert c.runs.get("run_1").status == "queued"
    doc = {
        "apiVersion": "couler.dev/v1alpha1",
        "name": "w",
        "steps": [{"name": "a", "container": {"image": "alpine", "command": ["true"]}}],
    }
    c.runs.submit(ir=doc)
    assert [m for m, _ in calls] == ["GET", "GET", "POST", "POST"]
    assert calls[2][1] is not None and calls[2][1] == calls[3][1], "one key for both tries"


def test_unkeyed_writes_are_not_repeated() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        return httpx.Response(503, json={"code": "unavailable", "detail": "down"})

    c = client_with(handler)
    with pytest.raises(CoulerAPIError) as caught:
        c.runs.cancel("run_1")
    assert caught.value.status == 503 and calls == ["POST"]


def test_problems_become_typed_errors_with_every_item() -> None:
    problem = {
        "type": "https://couler.dev/problems/validation_failed",
        "title": "Unprocessable Entity",
        "status": 422,
        "code": "validation_failed",
        "detail": "the document has 2 problem(s)",
        "path": "/steps/0/name",
        "problems": [
            {"path": "/steps/0/name", "code": "invalid_name", "message": "bad"},
            {"path": "/steps/1", "code": "missing_field", "message": "missing"},
        ],
    }

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/cancel"):
            return httpx.Response(409, json={"code": "run_finished", "detail": "done", "status": 409})
        return httpx.Response(422, json=problem, headers={"content-type": "application/problem+json"})

    c = client_with(handler)
    with pytest.raises(Invalid) as caught:
        c.workflows.get("w")
    error = caught.value
    assert (error.code, error.path) == ("validation_failed", "/steps/0/name")
    assert [p.path for p in error.problems] == ["/steps/0/name", "/steps/1"]
    assert "/steps/1: missing" in str(error)
    with pytest.raises(Conflict):
        c.runs.cancel("run_1")


def test_server_sent_events_are_read_whole() -> None:
    view = {"id": 7, "run_id": "run_1", "kind": "run.succeeded", "status": "succeeded", "data": {}}
    lines = [": keep-alive", "", "id: 7", "event: run.succeeded", f"data: {json.dumps(view)}", ""]
    events = list(_sse(iter(lines)))
    assert [(e.id, e.final) for e in events] == [(7, True)]
