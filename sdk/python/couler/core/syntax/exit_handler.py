"""`set_exit_handler`: steps that run when the workflow ends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from couler.core import states, step_update


def set_exit_handler(status: str, exit_handler: Callable[[], Any]) -> None:
    """Run `exit_handler`'s steps when the workflow ends with `status` (a `WFStatus`)."""
    with step_update.scope(step_update.ExitScope(status)) as handler:
        exit_handler()
    states.workflow.exit_steps.extend(handler.steps)
