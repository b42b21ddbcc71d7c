from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.hints_node_selector import HintsNodeSelector


T = TypeVar("T", bound="Hints")


@_attrs_define
class Hints:
    """Engine hints, passed through as given.

    Attributes:
        node_selector (HintsNodeSelector | Unset):
        tolerations (list[Any] | Unset): Kubernetes tolerations, passed through unchanged.
    """

    node_selector: HintsNodeSelector | Unset = UNSET
    tolerations: list[Any] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        node_selector: dict[str, Any] | Unset = UNSET
        if not isinstance(self.node_selector, Unset):
            node_selector = self.node_selector.to_dict()

        tolerations: list[Any] | Unset = UNSET
        if not isinstance(self.tolerations, Unset):
            tolerations = self.tolerations

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if node_selector is not UNSET:
            field_dict["nodeSelector"] = node_selector
        if tolerations is not UNSET:
            field_dict["tolerations"] = tolerations

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.hints_node_selector import HintsNodeSelector  # noqa: PLC0415

        d = dict(src_dict)
        _node_selector = d.pop("nodeSelector", UNSET)
        node_selector: HintsNodeSelector | Unset
        if isinstance(_node_selector, Unset):
            node_selector = UNSET
        else:
            node_selector = HintsNodeSelector.from_dict(_node_selector)

        tolerations = cast(list[Any], d.pop("tolerations", UNSET))

        hints = cls(
            node_selector=node_selector,
            tolerations=tolerations,
        )

        return hints
