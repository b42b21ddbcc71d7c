from __future__ import annotations

from collections.abc import Iterator

import pytest

import couler.argo as couler
from couler.core import states


@pytest.fixture(autouse=True)
def fresh_workflow(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test builds its own workflow, with no control plane and default settings.

    (The Couler SDK's tests set a name salter for the whole process.)
    """
    monkeypatch.setattr(states, "defaults", states.Defaults())
    for name in ("COULER_SERVER", "COULER_TOKEN", "COULER_ACCEPT_CHANGES", "COULER_RUN_ID_FILE"):
        monkeypatch.delenv(name, raising=False)
    couler._cleanup()
    yield
    couler._cleanup()
