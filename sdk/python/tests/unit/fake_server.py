"""A stand-in for the control plane's import endpoint, for tests.

`FakeControlPlane` answers like `POST /v1/workflows:import` and records
every request; as an `httpx.MockTransport` in-process, or as an HTTP server
on a loopback port for programs run as subprocesses.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

TOKEN = "test-token"


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeControlPlane:
    """Imports every workflow and starts a run, unless told to refuse or fail."""

    unsupported: list[dict[str, Any]] = field(default_factory=list)
    refuse: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    runs: int = 0

    def answer(self, method: str, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        self.requests.append(Recorded(method, path, headers, body))
        if headers.get("authorization") != "Bearer " + TOKEN:
            return 401, {"code": "unauthorized", "detail": "no valid token", "status": 401}
        if method == "POST" and path == "/v1/workflows:import":
            return self._import(body)
        if method == "PUT" and path.startswith("/v1/secrets/"):
            return 200, {"name": path.rsplit("/", 1)[1], "keys": sorted(body["data"])}
        if method == "POST" and path.startswith("/v1/runs/") and path.endswith("/cancel"):
            return 200, {"id": path.split("/")[3], "state": "cancelled"}
        return 404, {"code": "not_found", "detail": "no route %s %s" % (method, path), "status": 404}

    def _import(self, body: dict[str, Any]) -> tuple[int, Any]:
        if self.refuse and not body.get("acceptChanges"):
            return 422, {
                "type": "about:blank",
                "title": "Unprocessable Entity",
                "status": 422,
                "code": "import_changes_run",
                "detail": "importing this workflow would change what runs",
                "problems": self.refuse,
            }
        self.runs += 1
        run_id = "run_%d" % self.runs
        labels = body["run"]["labels"]
        return 201, {
            "workflow": {"name": body["source"]["metadata"].get("name", "imported")},
            "unsupported": self.unsupported,
            "run": {"id": run_id, "workflowName": "imported", "state": "queued", "labels": labels},
        }

    def imports(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == "/v1/workflows:import"]

    def transport(self) -> httpx.MockTransport:
        def handle(request: httpx.Request) -> httpx.Response:
            body = json.loads(request.content) if request.content else None
            status, answer = self.answer(
                request.method, request.url.path, dict(request.headers), body
            )
            return httpx.Response(status, json=answer, headers=_content_type(status))

        return httpx.MockTransport(handle)

    def serve(self) -> ThreadingHTTPServer:
        """Serve on 127.0.0.1 (a free port) in a thread; shut it down when done."""
        plane = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                headers = {key.lower(): value for key, value in self.headers.items()}
                status, answer = plane.answer(self.command, self.path, headers, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                for key, value in _content_type(status).items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = _handle

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server


def _content_type(status: int) -> dict[str, str]:
    kind = "application/json" if status < 400 else "application/problem+json"
    return {"content-type": kind}
