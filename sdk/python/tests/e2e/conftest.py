"""End-to-end fixtures: a real `couler up` (API, scheduler, local engine) on
a free port with a fresh database, shared by the session.

The `couler` binary comes from `COULER_BIN`, else the workspace's debug
build (`cargo build -p couler-cli`). Postgres and Redis are the machine's
(scripts/lib/services.sh starts them). Each session gets its own database
and Redis key prefix, dropped at the end, and its own data directory.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[4]
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"


@dataclass(frozen=True)
class Server:
    url: str
    token: str
    data_dir: Path
    log: Path

    def env(self, **extra: str) -> dict[str, str]:
        """The environment a program needs to run on this server."""
        env = dict(os.environ)
        env.update(COULER_SERVER=self.url, COULER_TOKEN=self.token, **extra)
        return env


def _couler_bin() -> Path:
    given = os.environ.get("COULER_BIN")
    if given:
        return Path(given)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    binary = target / "debug" / "couler"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run `cargo build -p couler-cli` (or set COULER_BIN)")
    return binary


def _psql(sql: str) -> None:
    subprocess.run(
        ["psql", PG_ADMIN, "-v", "ON_ERROR_STOP=1", "-qc", sql],
        check=True,
        capture_output=True,
    )


def _drop_keys(prefix: str) -> None:
    keys = subprocess.run(
        ["redis-cli", "--scan", "--pattern", f"{prefix}*"], capture_output=True, text=True
    ).stdout.split()
    for start in range(0, len(keys), 500):
        subprocess.run(["redis-cli", "DEL", *keys[start : start + 500]], capture_output=True)


def _wait_for_banner(proc: subprocess.Popen[str], log: Path, deadline: float) -> str:
    """The API's address, read from `couler up`'s banner."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"couler up exited with {proc.returncode}:\n{log.read_text()}")
        found = re.search(r"API\s+(http://\S+)", log.read_text())
        if found:
            return found.group(1)
        time.sleep(0.1)
    pytest.fail(f"couler up did not start in time:\n{log.read_text()}")


def _wait_ready(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    pytest.fail(f"{url}/readyz never answered 200")


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    # Named so that scripts/test's clean-up finds what a killed run left.
    name = uuid.uuid4().hex[:12]
    database = f"couler_test_sdk_{name}"
    prefix = f"couler-test-sdk-{name}"
    data_dir = Path(tempfile.mkdtemp(prefix="couler-sdk-e2e-"))
    # Step users (one uid per tenant) must be able to reach the data dir.
    data_dir.chmod(0o755)
    log = data_dir / "couler-up.log"
    env = dict(os.environ)
    # Steps run host programs (the local engine ignores images): the
    # examples call `cowsay`, which Debian installs under /usr/games.
    env["PATH"] = env.get("PATH", "/usr/bin:/bin") + ":/usr/games"
    env.pop("COULER_SERVER", None)
    env.pop("COULER_TOKEN", None)
    # A cache index of its own: the machine's Redis is shared.
    env["COULER__REDIS__KEY_PREFIX"] = prefix
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                str(_couler_bin()),
                "up",
                "--addr",
                "127.0.0.1:0",
                "--database-url",
                f"postgres://postgres@127.0.0.1:5432/{database}",
                "--data-dir",
                str(data_dir / "data"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            text=True,
        )
    try:
        deadline = time.monotonic() + 120
        url = _wait_for_banner(proc, log, deadline)
        _wait_ready(url, deadline)
        token = (data_dir / "data" / "dev.api-key").read_text().strip()
        yield Server(url=url, token=token, data_dir=data_dir, log=log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        _psql(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        _drop_keys(prefix)
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture()
def client(server: Server):
    from couler import Client

    with Client(server.url, server.token) as c:
        yield c
