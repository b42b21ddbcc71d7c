"""The DSL's control flow: DAGs, conditions, loops, recursion, exit handlers."""

from couler.core.syntax.concurrent import concurrent
from couler.core.syntax.conditional import when
from couler.core.syntax.dag import dag, set_dependencies
from couler.core.syntax.exit_handler import set_exit_handler
from couler.core.syntax.loop import map
from couler.core.syntax.predicates import (
    bigger,
    bigger_equal,
    equal,
    not_equal,
    smaller,
    smaller_equal,
)
from couler.core.syntax.recursion import exec_while
from couler.core.syntax.workflow_options import (
    add_image_pull_secret,
    add_toleration,
    add_volume,
    create_workflow_volume,
    set_dns,
)

__all__ = [
    "add_image_pull_secret",
    "add_toleration",
    "add_volume",
    "bigger",
    "bigger_equal",
    "concurrent",
    "create_workflow_volume",
    "dag",
    "equal",
    "exec_while",
    "map",
    "not_equal",
    "set_dependencies",
    "set_dns",
    "set_exit_handler",
    "smaller",
    "smaller_equal",
    "when",
]
