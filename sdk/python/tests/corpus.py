"""Where the compatibility corpus (the Couler SDK's tests and programs) is.

It is test data kept outside the repository: `$COULER_CORPUS_DIR`, by
default `<repo>/../shared/corpus/couler-programs`.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

CORPUS_ENV = "COULER_CORPUS_DIR"
REPO = Path(__file__).resolve().parents[3]


def corpus_dir() -> Path:
    return Path(os.environ.get(CORPUS_ENV) or REPO.parent / "shared" / "corpus" / "couler-programs")


def register_upstream_tests() -> list[str]:
    """Make `couler.tests` the corpus's tests/ package; return its test module names.

    Every other `couler.*` module stays ours, so the upstream tests exercise
    this package exactly as they exercised the Couler SDK.
    """
    tests = corpus_dir() / "tests"
    if not (tests / "__init__.py").is_file():
        return []
    if "couler.tests" not in sys.modules:
        import couler

        spec = importlib.util.spec_from_file_location(
            "couler.tests", tests / "__init__.py", submodule_search_locations=[str(tests)]
        )
        assert spec is not None and spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules["couler.tests"] = package
        spec.loader.exec_module(package)
        couler.tests = package  # type: ignore[attr-defined]
    return sorted(path.stem for path in tests.glob("*_test.py"))


def programs() -> list[str]:
    """The corpus's programs (examples/, integration_tests/), relative to it."""
    return sorted(
        str(path.relative_to(corpus_dir()))
        for folder in ("examples", "integration_tests")
        for path in (corpus_dir() / folder).glob("*.py")
    )


def run_program(
    program: str, url: str, token: str, cwd: Path, timeout: float = 120
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Runs a corpus program unchanged against the control plane at `url`;
    its result and the ids of the runs it started (`COULER_RUN_ID_FILE`)."""
    ids = cwd / "run-ids"
    env = dict(os.environ, COULER_SERVER=url, COULER_TOKEN=token, COULER_RUN_ID_FILE=str(ids))
    env.pop("COULER_ACCEPT_CHANGES", None)
    done = subprocess.run(
        [sys.executable, str(corpus_dir() / program)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done, ids.read_text().split() if ids.exists() else []
