from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field


from typing import cast


T = TypeVar("T", bound="PartView")


@_attrs_define
class PartView:
    """One sub-workflow of a split plan.

    Attributes:
        after (list[int]): Parts that must succeed before this one is submitted.
        bytes_ (int): Estimated manifest bytes.
        index (int):
        pods (int):
        steps (list[str]):
    """

    after: list[int]
    bytes_: int
    index: int
    pods: int
    steps: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        after = self.after

        bytes_ = self.bytes_

        index = self.index

        pods = self.pods

        steps = self.steps

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "after": after,
                "bytes": bytes_,
                "index": index,
                "pods": pods,
                "steps": steps,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        after = cast(list[int], d.pop("after"))

        bytes_ = d.pop("bytes")

        index = d.pop("index")

        pods = d.pop("pods")

        steps = cast(list[str], d.pop("steps"))

        part_view = cls(
            after=after,
            bytes_=bytes_,
            index=index,
            pods=pods,
            steps=steps,
        )

        part_view.additional_properties = d
        return part_view

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
