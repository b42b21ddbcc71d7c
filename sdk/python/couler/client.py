"""`couler.Client`: the typed client for the Couler control plane.

A thin layer over the client generated from the API's OpenAPI document
(`couler._api`): the server and token come from `COULER_SERVER` and
`COULER_TOKEN` (as for the CLI), answers are the generated typed models,
errors raise `couler.errors.CoulerAPIError` (typed by status, with the
problem's `code`, `path` and every item), lists are iterators over every
page, and 429/503 answers are retried after `Retry-After` where a retry is
safe (reads, and writes sent with an `Idempotency-Key`).

    from couler import Client

    with Client() as couler:
        run = couler.runs.submit(ir="examples/diamond.yaml")
        done = couler.runs.wait(run.id)
"""

from __future__ import annotations

import itertools
import json
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import httpx

from couler import ir as ir_docs
from couler._api import AuthenticatedClient
from couler._api.api.cache import explain as cache_explain
from couler._api.api.cache import stats as cache_stats
from couler._api.api.generations import create_generation, get_generation, give_feedback, list_generations
from couler._api.api.runs import cancel_run, create_run, get_run, list_runs, retry_run
from couler._api.api.secrets import delete_secret, get_secret, list_secrets, put_secret
from couler._api.api.workflows import (
    add_version,
    create_workflow,
    delete_workflow,
    get_workflow,
    import_workflow,
    list_versions,
    list_workflows,
)
from couler._api.models import (
    CacheStats,
    CreateRun,
    EventView,
    ExplainRequest,
    Explanation,
    FeedbackBody,
    GenerateBody,
    GenerationDetail,
    GenerationSummary,
    ImportRequest,
    ImportResult,
    PutSecret,
    RunView,
    SecretView,
    VersionSummary,
    WorkflowDetail,
    WorkflowSummary,
)
from couler._api.types import UNSET
from couler.errors import CoulerAPIError, RunTimeout

T = TypeVar("T")

#: Run statuses after which nothing changes (until a retry).
FINAL = frozenset({"succeeded", "failed", "cancelled"})
#: At most this long between retries of a refused request.
MAX_RETRY_AFTER = 30.0


class _RetryTransport(httpx.BaseTransport):
    """Retries 429 and 503 answers after `Retry-After`, for requests that
    are safe to repeat: reads, and writes with an `Idempotency-Key`."""

    def __init__(self, inner: httpx.BaseTransport, retries: int) -> None:
        self._inner = inner
        self._retries = retries

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        safe = request.method in ("GET", "HEAD") or "idempotency-key" in request.headers
        attempt = 0
        while True:
            response = self._inner.handle_request(request)
            if not safe or attempt >= self._retries or response.status_code not in (429, 503):
                return response
            response.read()
            response.close()
            time.sleep(_retry_after(response, attempt))
            attempt += 1

    def close(self) -> None:
        self._inner.close()


def _retry_after(response: httpx.Response, attempt: int) -> float:
    try:
        wait = float(response.headers.get("retry-after", ""))
    except ValueError:
        wait = 0.5 * 2**attempt
    return max(0.0, min(wait, MAX_RETRY_AFTER))


def _unset(value: Any) -> Any:
    return UNSET if value is None else value


@dataclass(frozen=True)
class Event:
    """One event of a run, as the events stream sends it."""

    id: int
    kind: str
    step: str | None
    status: str | None
    message: str | None
    data: dict[str, Any]

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> Event:
        return cls(
            id=int(view["id"]),
            kind=str(view["kind"]),
            step=view.get("step"),
            status=view.get("status"),
            message=view.get("message"),
            data=view.get("data") or {},
        )

    @property
    def final(self) -> bool:
        """Whether it ends the run (or its attempt, when a retry follows)."""
        return self.step is None and self.kind.startswith("run.") and self.status in FINAL


class Client:
    """The Couler API, for one tenant (the token's)."""

    def __init__(
        self,
        server: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        server = server or os.environ.get("COULER_SERVER")
        token = token or os.environ.get("COULER_TOKEN")
        if not server:
            raise ValueError("no server: pass server= or set COULER_SERVER (e.g. http://127.0.0.1:8080)")
        if not token:
            raise ValueError("no token: pass token= or set COULER_TOKEN (an API key or a JWT)")
        inner = transport or httpx.HTTPTransport()
        #: The generated low-level client (every operation of the API).
        self.api = AuthenticatedClient(
            base_url=server.rstrip("/"),
            token=token,
            timeout=httpx.Timeout(timeout),
            httpx_args={"transport": _RetryTransport(inner, retries)},
        )
        self.workflows = Workflows(self)
        self.runs = Runs(self)
        self.generations = Generations(self)
        self.cache = Cache(self)
        self.secrets = Secrets(self)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.api.get_httpx_client().close()

    @property
    def http(self) -> httpx.Client:
        """The underlying httpx client (base URL and token set)."""
        return self.api.get_httpx_client()

    @staticmethod
    def validate(document: str | Path | dict[str, Any]) -> dict[str, Any]:
        """A workflow document checked offline against the IR schema."""
        return ir_docs.validate(document)

    def _call(self, operation: ModuleType, *args: Any, **kwargs: Any) -> Any:
        """Runs a generated operation (its module); its parsed answer, or
        the error. Error answers are read here, not by the generated
        parser, so that one without a problem document (a proxy's) still
        raises a clear error."""
        response = self.http.request(**operation._get_kwargs(*args, **kwargs))
        if response.status_code >= 400:
            raise _error(response.status_code, response.content)
        return operation._build_response(client=self.api, response=response).parsed

    def _pages(self, operation: ModuleType, **kwargs: Any) -> Iterator[Any]:
        cursor: Any = UNSET
        while True:
            page = self._call(operation, cursor=cursor, **kwargs)
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor


def _error(status: int, content: bytes) -> CoulerAPIError:
    text = content.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    return CoulerAPIError.from_response(int(status), body, text)


def _raise_for(response: httpx.Response) -> None:
    if response.status_code >= 400:
        response.read()
        raise _error(response.status_code, response.content)


class Workflows:
    """Stored workflows and their versions."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def create(self, document: str | Path | dict[str, Any]) -> WorkflowDetail:
        """Stores a workflow (validated offline first)."""
        doc = ir_docs.validate(document)
        return self._c._call(create_workflow, body=_ir_model(doc))

    def add_version(self, workflow: str, document: str | Path | dict[str, Any]) -> WorkflowDetail:
        doc = ir_docs.validate(document)
        return self._c._call(add_version, workflow, body=_ir_model(doc))

    def get(self, workflow: str, version: int | None = None) -> WorkflowDetail:
        """A workflow by `wf_…` id or name, at a version (default: latest)."""
        return self._c._call(get_workflow, workflow, version=_unset(version))

    def list(self, *, name: str | None = None, label: str | None = None) -> Iterator[WorkflowSummary]:
        """Every workflow (name prefix, `key=value[,…]` label selector)."""
        return self._c._pages(list_workflows, name=_unset(name), label=_unset(label))

    def versions(self, workflow: str) -> list[VersionSummary]:
        return self._c._call(list_versions, workflow)

    def delete(self, workflow: str) -> None:
        self._c._call(delete_workflow, workflow)

    def import_argo(
        self,
        source: str | Path | dict[str, Any],
        *,
        accept_changes: bool = False,
        store: bool = False,
        run: dict[str, Any] | None = None,
    ) -> ImportResult:
        """Imports an Argo manifest (dict, YAML text or file). Refused with
        `Invalid` (code `import_changes_run`) when something that changes
        what runs cannot be carried over, unless `accept_changes`."""
        if not isinstance(source, dict):
            source = ir_docs.text_of(source)
        body: dict[str, Any] = {"source": source, "acceptChanges": accept_changes, "store": store}
        if run is not None:
            body["run"] = run
        return self._c._call(import_workflow, body=ImportRequest.from_dict(body))


def _ir_model(doc: dict[str, Any]) -> Any:
    from couler._api.models import CoulerWorkflow

    return CoulerWorkflow.from_dict(doc)


class Runs:
    """Runs: submit, follow, read, cancel, retry."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def submit(
        self,
        workflow: str | None = None,
        *,
        ir: str | Path | dict[str, Any] | None = None,
        version: int | None = None,
        parameters: dict[str, Any] | None = None,
        labels: dict[str, str] | None = None,
        priority: int | None = None,
        idempotency_key: str | None = None,
    ) -> RunView:
        """Queues a run of a stored workflow (id or name) or of a document
        (validated offline first). Sent with an `Idempotency-Key` (a fresh
        one unless given), so a retried submit never runs twice."""
        if (workflow is None) == (ir is None):
            raise ValueError("give either workflow= (a stored workflow) or ir= (a document)")
        body: dict[str, Any] = {}
        if workflow is not None:
            body["workflow"] = workflow
        if ir is not None:
            body["ir"] = ir_docs.validate(ir)
        if version is not None:
            body["version"] = version
        if parameters:
            body["parameters"] = parameters
        if labels:
            body["labels"] = labels
        if priority is not None:
            body["priority"] = priority
        key = idempotency_key or f"py-{uuid.uuid4()}"
        return self._c._call(create_run, body=CreateRun.from_dict(body), idempotency_key=key)

    def get(self, run_id: str) -> RunView:
        return self._c._call(get_run, run_id)

    def list(
        self,
        *,
        status: str | None = None,
        workflow: str | None = None,
        label: str | None = None,
    ) -> Iterator[RunView]:
        """Every run, newest first (filters as `GET /v1/runs`)."""
        return self._c._pages(
            list_runs, status=_unset(status), workflow=_unset(workflow), label=_unset(label)
        )

    def cancel(self, run_id: str) -> RunView:
        return self._c._call(cancel_run, run_id)

    def retry(self, run_id: str) -> RunView:
        """Runs a failed or cancelled run again from its failed steps."""
        return self._c._call(retry_run, run_id)

    def wait(self, run_id: str, timeout: float | None = None) -> RunView:
        """The run once it has ended. Follows its event stream (resuming
        after a dropped connection) and raises `RunTimeout` after
        `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        run = self.get(run_id)
        while run.status not in FINAL:
            try:
                for event in self.events(run_id, deadline=deadline):
                    if event.final:
                        break
            except RunTimeout:
                raise RunTimeout(f"run {run_id} did not end within {timeout} s") from None
            run = self.get(run_id)
            if deadline is not None and time.monotonic() >= deadline and run.status not in FINAL:
                raise RunTimeout(f"run {run_id} did not end within {timeout} s")
        return run

    def events(self, run_id: str, *, after: int | None = None, deadline: float | None = None) -> Iterator[Event]:
        """The run's events, live, until it ends. A dropped stream is
        resumed after the last event seen (`Last-Event-ID`)."""
        last = after
        while True:
            headers = {"Accept": "text/event-stream"}
            if last is not None:
                headers["Last-Event-ID"] = str(last)
            read = None if deadline is None else max(0.1, deadline - time.monotonic())
            try:
                with self._c.http.stream(
                    "GET",
                    f"/v1/runs/{run_id}/events",
                    headers=headers,
                    timeout=httpx.Timeout(30.0, read=read),
                ) as response:
                    _raise_for(response)
                    for event in _sse(response.iter_lines()):
                        last = event.id
                        yield event
                    return
            except (httpx.ReadTimeout, httpx.RemoteProtocolError, httpx.ReadError):
                if deadline is not None and time.monotonic() >= deadline:
                    raise RunTimeout(f"run {run_id}: no end before the deadline") from None
                time.sleep(0.2)

    def logs(self, run_id: str, step: str, *, attempt: int | None = None) -> str:
        """A step's log as it is now."""
        params = {"step": step} | ({"attempt": attempt} if attempt is not None else {})
        response = self._c.http.get(f"/v1/runs/{run_id}/logs", params=params)
        _raise_for(response)
        return response.text

    def follow_logs(self, run_id: str, step: str, *, attempt: int | None = None) -> Iterator[str]:
        """A step's log as it is written, chunk by chunk, until the step
        ends; a dropped connection resumes at the byte offset reached."""
        offset = 0
        while True:
            params: dict[str, Any] = {"step": step, "follow": "true", "offset": offset}
            if attempt is not None:
                params["attempt"] = attempt
            try:
                with self._c.http.stream(
                    "GET", f"/v1/runs/{run_id}/logs", params=params, timeout=httpx.Timeout(30.0, read=None)
                ) as response:
                    _raise_for(response)
                    start = int(response.headers.get("couler-log-offset", offset) or offset)
                    offset = start
                    for chunk in response.iter_bytes():
                        offset += len(chunk)
                        yield chunk.decode("utf-8", "replace")
                    return
            except (httpx.RemoteProtocolError, httpx.ReadError):
                time.sleep(0.2)


def _sse(lines: Iterator[str]) -> Iterator[Event]:
    """Server-sent events (only those carrying a run event's JSON)."""
    data: list[str] = []
    # A blank line ends an event; the end of the stream ends the last one.
    for line in itertools.chain(lines, [""]):
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line == "" and data:
            payload = json.loads("\n".join(data))
            data = []
            if isinstance(payload, dict) and "id" in payload:
                yield Event.from_view(payload)


class Generations:
    """Workflows drafted from natural language."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def create(self, description: str, *, name: str | None = None) -> GenerationDetail:
        body: dict[str, Any] = {"description": description}
        if name is not None:
            body["name"] = name
        return self._c._call(create_generation, body=GenerateBody.from_dict(body))

    def get(self, generation_id: str) -> GenerationDetail:
        return self._c._call(get_generation, generation_id)

    def feedback(self, generation_id: str, text: str) -> GenerationDetail:
        """Revises the latest draft (e.g. "use 4 GPUs for training")."""
        return self._c._call(give_feedback, generation_id, body=FeedbackBody(text=text))

    def list(self) -> Iterator[GenerationSummary]:
        return self._c._pages(list_generations)


class Cache:
    """The shared cache index, as the tenant sees it."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def explain(
        self,
        workflow: str | None = None,
        *,
        ir: str | Path | dict[str, Any] | None = None,
        parameters: dict[str, Any] | None = None,
    ) -> Explanation:
        """Which steps of a workflow would be cache hits, and why not."""
        body: dict[str, Any] = {}
        if workflow is not None:
            body["workflow"] = workflow
        if ir is not None:
            body["ir"] = ir_docs.validate(ir)
        if parameters:
            body["parameters"] = parameters
        return self._c._call(cache_explain, body=ExplainRequest.from_dict(body))

    def stats(self) -> CacheStats:
        return self._c._call(cache_stats)


class Secrets:
    """The tenant's secrets: values go in, never come out."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def put(self, name: str, data: dict[str, str]) -> SecretView:
        return self._c._call(put_secret, name, body=PutSecret.from_dict({"data": data}))

    def get(self, name: str) -> SecretView:
        """A secret's metadata (its keys, version), never its values."""
        return self._c._call(get_secret, name)

    def list(self) -> Iterator[SecretView]:
        return iter(self._c._call(list_secrets).items)

    def delete(self, name: str) -> None:
        self._c._call(delete_secret, name)


__all__ = ["Client", "Event", "EventView"]
