from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field


from typing import cast

if TYPE_CHECKING:
    from ..models.graph_node import GraphNode


T = TypeVar("T", bound="GraphView")


@_attrs_define
class GraphView:
    """Nodes in IR order (steps, then exit handlers) and edges between them.

    Attributes:
        edges (list[list[int]]): `[from, to]` node indexes: `to` runs after `from`. Exit handlers
            that depend on no other exit handler follow every last step of
            the workflow.
        ir_hash (str): The workflow digest, also the `ETag`.
        nodes (list[GraphNode]):
    """

    edges: list[list[int]]
    ir_hash: str
    nodes: list[GraphNode]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        edges = []
        for edges_item_data in self.edges:
            edges_item = edges_item_data

            edges.append(edges_item)

        ir_hash = self.ir_hash

        nodes = []
        for nodes_item_data in self.nodes:
            nodes_item = nodes_item_data.to_dict()
            nodes.append(nodes_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "edges": edges,
                "ir_hash": ir_hash,
                "nodes": nodes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.graph_node import GraphNode  # noqa: PLC0415

        d = dict(src_dict)
        edges = []
        _edges = d.pop("edges")
        for edges_item_data in _edges:
            edges_item = cast(list[int], edges_item_data)

            edges.append(edges_item)

        ir_hash = d.pop("ir_hash")

        nodes = []
        _nodes = d.pop("nodes")
        for nodes_item_data in _nodes:
            nodes_item = GraphNode.from_dict(nodes_item_data)

            nodes.append(nodes_item)

        graph_view = cls(
            edges=edges,
            ir_hash=ir_hash,
            nodes=nodes,
        )

        graph_view.additional_properties = d
        return graph_view

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
