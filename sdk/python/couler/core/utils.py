"""Helpers shared by the DSL: names from the call stack, function bodies, env lists."""

from __future__ import annotations

import base64
import inspect
import io
import os
import sys
import textwrap
import tokenize
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any, NamedTuple


def argo_safe_name(name: str | None) -> str | None:
    """Argo names allow no `_` or `.`: both become `-`."""
    if name is None:
        return None
    return name.replace("_", "-").replace(".", "-")


def _frame_name(frame: FrameType) -> str:
    name = frame.f_code.co_name
    if name == "<module>":
        return _file_stem(frame.f_code.co_filename)
    return name.strip("<>")


def _file_stem(filename: str) -> str:
    base = os.path.basename(filename)
    # `python -m pytest` on Python 3.11+ starts in "<frozen runpy>".
    if base.startswith("<frozen "):
        base = base[len("<frozen ") :]
    return os.path.splitext(base.strip("<>"))[0]


class CallSite(NamedTuple):
    """Where the user's code called a DSL function."""

    name: str  # the calling function, Argo-safe; at module level `<file>-<line>`
    line: int  # the line that called that function; at module level, of the call
    module_level: bool


def call_site() -> CallSite:
    """The call site of the DSL function that asks (see `invocation_location`)."""
    dsl_function = sys._getframe(1)
    user = dsl_function.f_back
    if user is None:
        raise RuntimeError("call_site needs a caller")
    if user.f_code.co_name == "<module>" or user.f_back is None:
        # Named after the line, not the file alone, which names the entry template.
        name = "%s-%d" % (_frame_name(user), user.f_lineno)
        return CallSite(argo_safe_name(name) or "", user.f_lineno, True)
    return CallSite(argo_safe_name(_frame_name(user)) or "", user.f_back.f_lineno, False)


def invocation_location() -> tuple[str, int]:
    """Name and line of the user's code around the DSL call that asks.

    Called from a DSL function such as `run_container`, this returns the name
    of the function that called it (the template name, made Argo-safe) and the
    line that called *that* function (which makes step names unique).
    """
    dsl_function = sys._getframe(1)
    user = dsl_function.f_back
    if user is None:
        raise RuntimeError("invocation_location needs a caller")
    if user.f_code.co_name == "<module>" or user.f_back is None:
        return argo_safe_name(_frame_name(user)) or "", user.f_lineno
    return argo_safe_name(_frame_name(user)) or "", user.f_back.f_lineno


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_line() -> int:
    """The line of the innermost caller outside this package."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if not os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
            return frame.f_lineno
        frame = frame.f_back
    return 0


def workflow_filename() -> str:
    """The stem of the program's entry file (the bottom of the call stack)."""
    frame = sys._getframe(0)
    while frame.f_back is not None:
        frame = frame.f_back
    return _file_stem(frame.f_code.co_filename)


def body(func: Callable[..., Any] | None) -> str | None:
    """The source of a function's body, dedented, between two newlines.

    Comments and blank lines inside the body are kept; the `def` line (and a
    multi-line signature) is not.
    """
    if func is None:
        return None
    source = textwrap.dedent(inspect.getsource(func))
    lines = source.splitlines()
    end = _header_end(source)
    if end is None:
        return source
    row, col = end
    rest = lines[row - 1][col:].strip()
    if rest and not rest.startswith("#"):
        # one-line function: `def f(): print(1)`
        return "\n%s\n" % rest
    return "\n%s\n" % textwrap.dedent("\n".join(lines[row:]))


def _header_end(source: str) -> tuple[int, int] | None:
    """Where the `def` header's closing colon ends, as (row, col)."""
    depth = 0
    seen_def = False
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME and token.string == "def" and depth == 0:
            seen_def = True
        elif token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif seen_def and depth == 0 and token.type == tokenize.OP and token.string == ":":
            return token.end
    return None


def encode_base64(value: str) -> str:
    return base64.b64encode(value.encode("utf-8")).decode("utf-8")


def gpu_requested(resources: Mapping[str, Any] | None) -> bool:
    """Whether a resources dict asks for a GPU (key `gpu`, any case or spacing)."""
    if resources is None:
        return False
    if not isinstance(resources, Mapping):
        raise TypeError("resources must be a dict, not %s" % type(resources).__name__)
    return any(key.strip().lower() == "gpu" for key in resources)


def non_empty(value: Any) -> bool:
    return value is not None and len(value) > 0


def literal_value(value: Any) -> str:
    """A literal as the string Argo gets; booleans are quoted so YAML keeps them strings."""
    if isinstance(value, bool):
        return "'%s'" % value
    if isinstance(value, str):
        return value
    return str(value)


def convert_dict_to_env_list(env: Mapping[str, Any]) -> list[dict[str, str]]:
    return [{"name": name, "value": literal_value(value)} for name, value in env.items()]
