from typing import Literal

NodeKind = Literal["exit", "map", "step", "tune", "while"]

NODE_KIND_VALUES: set[NodeKind] = {
    "exit",
    "map",
    "step",
    "tune",
    "while",
}


def check_node_kind(value: str) -> NodeKind:
    if value in NODE_KIND_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {NODE_KIND_VALUES!r}")
