from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field


T = TypeVar("T", bound="UnsupportedItem")


@_attrs_define
class UnsupportedItem:
    """One thing of the source the IR could not carry over.

    Attributes:
        changes_run (bool): Whether leaving it out changes what runs; otherwise only a
            Kubernetes setting is dropped.
        feature (str): A short, stable name of the feature (`volumes`, `templateRef`, …).
        message (str):
        path (str): JSON pointer into the source document.
    """

    changes_run: bool
    feature: str
    message: str
    path: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        changes_run = self.changes_run

        feature = self.feature

        message = self.message

        path = self.path

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "changesRun": changes_run,
                "feature": feature,
                "message": message,
                "path": path,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        changes_run = d.pop("changesRun")

        feature = d.pop("feature")

        message = d.pop("message")

        path = d.pop("path")

        unsupported_item = cls(
            changes_run=changes_run,
            feature=feature,
            message=message,
            path=path,
        )

        unsupported_item.additional_properties = d
        return unsupported_item

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
