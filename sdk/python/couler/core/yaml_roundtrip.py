"""The YAML round trip the Couler SDK puts a workflow through before it submits it.

Couler dumps the workflow with pyaml, which writes a string without spaces as
it is, and reads it back with `yaml.safe_load`. So the quotes the DSL puts
around references (`'"{{inputs.parameters.x}}"'`) and around booleans
(`"'False'"`) go away, and `"1234"` comes back as a number. Argo saw the
result, so the control plane is sent the same.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import yaml


class _CoulerDumper(yaml.SafeDumper):
    """pyaml's style: plain strings unless they hold a space, a newline or a `#`."""

    def choose_scalar_style(self) -> str | None:
        event = self.event
        if not isinstance(event, yaml.ScalarEvent) or event.tag != "tag:yaml.org,2002:str":
            return super().choose_scalar_style()
        is_key = self.states[-1] == self.expect_block_mapping_simple_value
        if event.style == "plain":
            if not is_key and event.value.endswith(":"):
                return "'"
            return "'" if " " in event.value else None
        return super().choose_scalar_style()


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "plain"
    if "\n" in data or not data or data == "-" or data[0] in "!&*[" or "#" in data:
        style = "|" if "\n" in data[:-1] else None
    return yaml.ScalarNode("tag:yaml.org,2002:str", data, style=style)


def _represent_mapping(dumper: yaml.SafeDumper, data: Any) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items())


def _represent_none(dumper: yaml.SafeDumper, data: None) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:null", "")


_CoulerDumper.add_representer(str, _represent_str)
_CoulerDumper.add_representer(dict, _represent_mapping)
_CoulerDumper.add_representer(OrderedDict, _represent_mapping)
_CoulerDumper.add_representer(type(None), _represent_none)


def dump(workflow: Any) -> str:
    """The workflow as Couler's YAML, keys in the order they were made."""
    return yaml.dump(workflow, Dumper=_CoulerDumper, default_flow_style=False, allow_unicode=True)


def roundtrip(workflow: Any) -> Any:
    """What Argo received from the Couler SDK for this workflow."""
    return yaml.safe_load(dump(workflow))
