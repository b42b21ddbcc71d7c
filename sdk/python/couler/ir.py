"""Workflow documents (IR) on the client side: reading them from YAML or
JSON without YAML 1.1's surprises, and validating them offline against the
IR's JSON Schema (`openapi/ir.schema.json`, packaged with the SDK) before
anything is sent.

PyYAML follows YAML 1.1, where `on`, `off`, `yes`, `no` are booleans: the
IR's `retry: {on: transient}` would arrive as `{True: "transient"}`. The
loader here keeps YAML 1.2's rule (only `true`/`false` are booleans), and
documents always travel as JSON.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from couler.errors import Invalid, ProblemItem

IR_API_VERSION = "couler.dev/v1alpha1"


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader whose booleans are YAML 1.2's: `true` and `false` only."""


_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def loads(text: str) -> Any:
    """A YAML (1.2 booleans) or JSON document."""
    return yaml.load(text, Loader=_Yaml12Loader)  # noqa: S506 - a SafeLoader


def text_of(source: str | Path) -> str:
    """The text of a file path (a `Path`, or a one-line string naming an
    existing file), or the string itself."""
    if isinstance(source, Path) or ("\n" not in source and Path(source).is_file()):
        return Path(source).read_text(encoding="utf-8")
    return source


def load(source: str | Path | dict[str, Any]) -> dict[str, Any]:
    """A workflow document from a dict, a file path, or YAML/JSON text."""
    if isinstance(source, dict):
        return source
    doc = loads(text_of(source))
    if not isinstance(doc, dict):
        raise Invalid(status=422, code="validation_failed", detail="a workflow document is a mapping", path="")
    return doc


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The IR's JSON Schema (draft 2020-12), as packaged."""
    text = resources.files("couler").joinpath("_schema/ir.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def problems(doc: dict[str, Any]) -> list[ProblemItem]:
    """Every way `doc` breaks the IR's schema, with JSON pointers."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    found = []
    for error in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
        pointer = "".join(f"/{str(p).replace('~', '~0').replace('/', '~1')}" for p in error.absolute_path)
        found.append(ProblemItem(path=pointer, code=str(error.validator), message=error.message))
    return found


def validate(source: str | Path | dict[str, Any]) -> dict[str, Any]:
    """The document, checked offline against the IR schema; raises
    `couler.errors.Invalid` listing every problem. The server checks more
    (references, cycles), so a valid document may still be refused there."""
    doc = load(source)
    found = problems(doc)
    if found:
        raise Invalid(
            status=422,
            code="validation_failed",
            detail=f"the document has {len(found)} problem(s)",
            path=found[0].path,
            problems=found,
        )
    return doc
