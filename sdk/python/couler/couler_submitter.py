"""Runs a Couler program's workflow on the Couler control plane.

The workflow goes through the Couler SDK's YAML round trip, then to
`POST /v1/workflows:import`, which turns the Argo workflow into Couler's IR
and starts a run. An import that would change what runs is refused with the
reasons, unless the caller accepts the changes.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from couler.core import yaml_roundtrip
from couler.core.constants import WorkflowCRD
from couler.core.templates.secret import Secret

SERVER_ENV = "COULER_SERVER"
TOKEN_ENV = "COULER_TOKEN"
ACCEPT_CHANGES_ENV = "COULER_ACCEPT_CHANGES"
RUN_ID_FILE_ENV = "COULER_RUN_ID_FILE"
NAMESPACE_LABEL = "couler.dev/namespace"

logger = logging.getLogger("couler")


def server_configured() -> bool:
    """Whether programs run on the control plane (`COULER_SERVER` is set)."""
    return bool(os.environ.get(SERVER_ENV))


class SubmitError(Exception):
    """The control plane refused a request; carries its problem document."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        problems: list[Mapping[str, Any]] | None = None,
    ):
        self.status = status
        self.code = code
        self.detail = detail
        self.problems = list(problems or [])
        super().__init__(self._message())

    def _message(self) -> str:
        lines = ["%s (HTTP %d, %s)" % (self.detail, self.status, self.code)]
        lines += ["  %s: %s" % (p.get("path", ""), p.get("message", "")) for p in self.problems]
        return "\n".join(lines)


class ImportRefused(SubmitError):
    """The import would make the workflow run differently from how Argo runs it."""

    def _message(self) -> str:
        lines = [
            "the Couler control plane refused this workflow: running it here would change "
            "what runs (%s)" % self.detail
        ]
        lines += ["  %s: %s" % (p.get("path", ""), p.get("message", "")) for p in self.problems]
        lines.append(
            "To run it with these changes, submit with CoulerSubmitter(accept_changes=True) "
            "or set %s=1." % ACCEPT_CHANGES_ENV
        )
        return "\n".join(lines)


class CoulerSubmitter:
    """Submits workflows to the control plane at `server` (default `$COULER_SERVER`).

    `token` defaults to `$COULER_TOKEN`; `namespace` is kept as the run's
    `couler.dev/namespace` label (the tenant comes from the token);
    `accept_changes` (default `$COULER_ACCEPT_CHANGES`) runs a workflow even
    when the import changes what runs. `transport` replaces the HTTP transport
    (tests use `httpx.MockTransport`).
    """

    def __init__(
        self,
        server: str | None = None,
        token: str | None = None,
        namespace: str = "default",
        accept_changes: bool | None = None,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ):
        server = server or os.environ.get(SERVER_ENV)
        if not server:
            raise ValueError(
                "CoulerSubmitter needs the control plane's address: pass server= or set %s"
                % SERVER_ENV
            )
        self.server = server.rstrip("/")
        self.token = token if token is not None else os.environ.get(TOKEN_ENV)
        self.namespace = namespace
        if accept_changes is None:
            accept_changes = os.environ.get(ACCEPT_CHANGES_ENV, "").lower() in ("1", "true", "yes")
        self.accept_changes = accept_changes
        self.timeout = timeout
        self.transport = transport

    def _client(self) -> httpx.Client:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer %s" % self.token
        return httpx.Client(
            base_url=self.server, headers=headers, timeout=self.timeout, transport=self.transport
        )

    def submit(
        self, workflow_yaml: Mapping[str, Any], secrets: Iterable[Secret] | None = None
    ) -> dict[str, Any]:
        """Import and run the workflow; returns an Argo-like Workflow for the run."""
        source = yaml_roundtrip.roundtrip(workflow_yaml)
        labels = {NAMESPACE_LABEL: _label_value(self.namespace)}
        body = {"source": source, "acceptChanges": self.accept_changes, "run": {"labels": labels}}
        with self._client() as client:
            for secret in secrets or []:
                self._store_secret(client, secret)
            response = _send(client, "POST", "/v1/workflows:import", json=body)
        report = response.json()
        _warn_unsupported(report.get("unsupported") or [])
        run = report.get("run") or {}
        run_id = run.get("id")
        if not run_id:
            raise SubmitError(response.status_code, "no_run", "the import started no run")
        _record_run_id(run_id)
        return {
            "apiVersion": WorkflowCRD.API_VERSION,
            "kind": WorkflowCRD.KIND,
            "metadata": {
                "name": run_id,
                "uid": run_id,
                "namespace": self.namespace,
                "labels": dict(run.get("labels") or labels),
            },
            "status": {"phase": "Pending"},
        }

    def cancel(self, run_id: str) -> dict[str, Any]:
        """Cancel run `run_id`; returns the run as the control plane shows it."""
        with self._client() as client:
            return _send(client, "POST", "/v1/runs/%s/cancel" % run_id).json()

    @staticmethod
    def _store_secret(client: httpx.Client, secret: Secret) -> None:
        """Store a secret the program made (`create_secret`) in the tenant's secrets.

        Existing secrets (`obtain_secret`), dry-run ones and artifact-store
        credentials (Couler stores artifacts itself) are not stored.
        """
        if secret.use_existing or secret.dry_run or secret.artifact_secret:
            return
        data = {key: str(value) for key, value in secret.data.items()}
        _send(client, "PUT", "/v1/secrets/%s" % secret.name, json={"data": data})


def _send(client: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response:
    try:
        response = client.request(method, path, **kwargs)
    except httpx.HTTPError as error:
        raise SubmitError(
            0, "unreachable", "cannot reach the control plane at %s: %s" % (client.base_url, error)
        ) from error
    if response.is_success:
        return response
    problem = _problem(response)
    error_type = ImportRefused if problem["code"] == "import_changes_run" else SubmitError
    raise error_type(
        response.status_code, problem["code"], problem["detail"], problem.get("problems")
    )


def _problem(response: httpx.Response) -> dict[str, Any]:
    try:
        problem = response.json()
    except ValueError:
        problem = None
    if not isinstance(problem, dict):
        return {"code": "http_%d" % response.status_code, "detail": response.text.strip()}
    problems = list(problem.get("problems") or [])
    if not problems and problem.get("path"):
        problems = [{"path": problem["path"], "message": problem.get("detail", "")}]
    return {
        "code": str(problem.get("code") or "http_%d" % response.status_code),
        "detail": str(problem.get("detail") or problem.get("title") or response.reason_phrase),
        "problems": problems,
    }


def _warn_unsupported(unsupported: list[Mapping[str, Any]]) -> None:
    for item in unsupported:
        how = "changes what runs (accepted)" if item.get("changesRun") else "ignored"
        logger.warning(
            "couler import: %s: %s %s: %s",
            item.get("path", ""),
            item.get("feature", ""),
            how,
            item.get("message", ""),
        )


def _record_run_id(run_id: str) -> None:
    path = os.environ.get(RUN_ID_FILE_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(run_id + "\n")


def _label_value(value: str) -> str:
    """A Kubernetes-style label value: 63 characters of `[A-Za-z0-9._-]`, alphanumeric ends."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "-", value)[:63]
    return re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", cleaned)
