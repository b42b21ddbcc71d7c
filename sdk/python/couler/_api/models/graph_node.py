from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field


from ..models.node_kind import check_node_kind
from ..models.node_kind import NodeKind


T = TypeVar("T", bound="GraphNode")


@_attrs_define
class GraphNode:
    """
    Attributes:
        kind (NodeKind): What kind of node a step is.
        name (str): The step's name (an exit handler's, for `exit`).
    """

    kind: NodeKind
    name: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind: str = self.kind

        name = self.name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "name": name,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = check_node_kind(d.pop("kind"))

        name = d.pop("name")

        graph_node = cls(
            kind=kind,
            name=name,
        )

        graph_node.additional_properties = d
        return graph_node

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
