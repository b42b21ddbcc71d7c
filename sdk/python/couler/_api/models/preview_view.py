from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field


if TYPE_CHECKING:
    from ..models.preview_tick import PreviewTick


T = TypeVar("T", bound="PreviewView")


@_attrs_define
class PreviewView:
    """
    Attributes:
        ticks (list[PreviewTick]): The next instants, in order (fewer when the schedule ends).
        timezone (str):
    """

    ticks: list[PreviewTick]
    timezone: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        ticks = []
        for ticks_item_data in self.ticks:
            ticks_item = ticks_item_data.to_dict()
            ticks.append(ticks_item)

        timezone = self.timezone

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "ticks": ticks,
                "timezone": timezone,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.preview_tick import PreviewTick  # noqa: PLC0415

        d = dict(src_dict)
        ticks = []
        _ticks = d.pop("ticks")
        for ticks_item_data in _ticks:
            ticks_item = PreviewTick.from_dict(ticks_item_data)

            ticks.append(ticks_item)

        timezone = d.pop("timezone")

        preview_view = cls(
            ticks=ticks,
            timezone=timezone,
        )

        preview_view.additional_properties = d
        return preview_view

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
