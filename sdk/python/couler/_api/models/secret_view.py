from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field


from typing import cast
import datetime


T = TypeVar("T", bound="SecretView")


@_attrs_define
class SecretView:
    """A secret without its value.

    Attributes:
        keys (list[str]): The secret's key names, sorted.
        name (str):
        updated_at (datetime.datetime):
        updated_by (str): Who wrote this version.
        version (int): 1 for the first write, one more for every replace (counting on
            after a delete and re-create).
    """

    keys: list[str]
    name: str
    updated_at: datetime.datetime
    updated_by: str
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        keys = self.keys

        name = self.name

        updated_at = self.updated_at.isoformat()

        updated_by = self.updated_by

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "keys": keys,
                "name": name,
                "updated_at": updated_at,
                "updated_by": updated_by,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        keys = cast(list[str], d.pop("keys"))

        name = d.pop("name")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        updated_by = d.pop("updated_by")

        version = d.pop("version")

        secret_view = cls(
            keys=keys,
            name=name,
            updated_at=updated_at,
            updated_by=updated_by,
            version=version,
        )

        secret_view.additional_properties = d
        return secret_view

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
