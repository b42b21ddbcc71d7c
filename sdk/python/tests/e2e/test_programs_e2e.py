"""Every program of the Couler corpus (examples/, integration_tests/) runs
unchanged on a real control plane (`couler up`, local engine), and its run
ends as the program intends. Programs that cannot run here are listed in
`not_runnable.txt` with the reason, and each must be refused with a clear
message naming it, never run wrongly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus import corpus_dir, programs, run_program

from couler import Client

HERE = Path(__file__).parent
PROGRAMS = programs()
pytestmark = pytest.mark.skipif(not PROGRAMS, reason=f"no Couler corpus at {corpus_dir()}")


def not_runnable() -> dict[str, tuple[str, str]]:
    """program -> (a word the refusal must contain, why it cannot run here)."""
    listed = {}
    for line in (HERE / "not_runnable.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            program, word, why = (part.strip() for part in line.split("|"))
            listed[program] = (word, why)
    return listed


def statuses(run) -> dict[str, str]:
    """Each step's status; a cache hit (the shared cache index found the
    same step computed by an earlier program) counts as succeeded."""
    return {step.name: "succeeded" if step.status == "cached" else step.status for step in run.steps}


def finished(client: Client, ids: list[str]) -> list:
    return [client.runs.wait(run_id, timeout=180) for run_id in ids]


def expect_hello(runs) -> None:
    assert [r.status for r in runs] == ["succeeded"], [(r.message, statuses(r)) for r in runs]


def expect_coin_flip(runs) -> None:
    (run,) = runs
    assert run.status == "succeeded", (run.message, statuses(run))
    branches = {name: s for name, s in statuses(run).items() if "heads" in name or "tails" in name}
    assert sorted(branches.values()) == ["skipped", "succeeded"], branches


def expect_dag(runs) -> None:
    (run,) = runs
    assert run.status == "succeeded", (run.message, statuses(run))
    steps = {s.name: s for s in run.steps}
    assert set(steps) == {"a", "b", "c", "d"}
    for before, after in [("a", "b"), ("a", "c"), ("b", "d")]:
        assert steps[before].finished_at <= steps[after].started_at, (before, after)


def expect_default_submitter(runs) -> None:
    assert [r.status for r in runs] == ["succeeded", "succeeded"], runs
    assert [r.labels.additional_properties.get("couler.dev/namespace") for r in runs] == [
        "my_namespace",
        "other_namespace",
    ]


def expect_dag_depends(runs) -> None:
    (run,) = runs
    got = statuses(run)
    assert run.status == "succeeded", (run.message, got)
    assert got["c"] == "failed" and got["should-not-execute"] == "skipped", got
    for name in ("a", "b", "should-execute-1", "should-execute-2", "should-execute-3"):
        assert got[name] == "succeeded", got


def expect_depends(runs) -> None:
    """Random outcomes; Argo's rules hold whichever way the coins fall: each
    task after a failed one runs, `allfail` runs only when all four failed,
    `anysucceeded` when one succeeded, and the run fails exactly when an
    omitted last step follows a failure (task1 failed)."""
    (run,) = runs
    got = statuses(run)
    tasks = [got[f"task{i}"] for i in range(1, 5)]
    for i in range(1, 4):
        ran = tasks[i] in ("succeeded", "failed")
        assert ran == (tasks[i - 1] == "failed"), got
    assert (got["allfail"] == "succeeded") == all(t == "failed" for t in tasks), got
    assert (got["anysucceeded"] == "succeeded") == ("succeeded" in tasks), got
    assert run.status == ("succeeded" if tasks[0] == "succeeded" else "failed"), (run.message, got)


def expect_mpi(runs) -> None:
    assert runs and all(r.status == "succeeded" for r in runs), [(r.status, r.message) for r in runs]


EXPECTED = {
    "examples/hello_world.py": expect_hello,
    "examples/coin_flip.py": expect_coin_flip,
    "examples/dag.py": expect_dag,
    "examples/default_submitter.py": expect_default_submitter,
    "examples/node_assign.py": expect_hello,
    "examples/depends.py": expect_depends,
    "integration_tests/dag_depends_example.py": expect_dag_depends,
    "integration_tests/flip_coin_security_context_example.py": expect_coin_flip,
    "integration_tests/mpi_example.py": expect_mpi,
}


def test_every_program_is_either_expected_to_run_or_listed() -> None:
    listed = not_runnable()
    for program in PROGRAMS:
        assert (program in EXPECTED) != (program in listed), program


@pytest.mark.parametrize("program", PROGRAMS)
def test_program_runs_unchanged(server, client: Client, program: str, tmp_path: Path) -> None:
    done, ids = run_program(program, server.url, server.token, tmp_path)
    listed = not_runnable()
    if program in listed:
        word, _why = listed[program]
        assert done.returncode != 0 and not ids, done.stdout + done.stderr
        assert word in done.stderr, done.stderr
        return
    assert done.returncode == 0, done.stdout + done.stderr
    EXPECTED[program](finished(client, ids))
