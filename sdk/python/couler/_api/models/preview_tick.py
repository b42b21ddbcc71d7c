from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field


import datetime


T = TypeVar("T", bound="PreviewTick")


@_attrs_define
class PreviewTick:
    """One upcoming tick.

    Attributes:
        at (datetime.datetime): The nominal instant, UTC.
        local (str): The same instant on the schedule's wall clock, with its offset.
        utc_offset (str): The schedule's zone's offset from UTC then (`+02:00`).
    """

    at: datetime.datetime
    local: str
    utc_offset: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        local = self.local

        utc_offset = self.utc_offset

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "local": local,
                "utc_offset": utc_offset,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))

        local = d.pop("local")

        utc_offset = d.pop("utc_offset")

        preview_tick = cls(
            at=at,
            local=local,
            utc_offset=utc_offset,
        )

        preview_tick.additional_properties = d
        return preview_tick

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
