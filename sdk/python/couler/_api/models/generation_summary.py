from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime


T = TypeVar("T", bound="GenerationSummary")


@_attrs_define
class GenerationSummary:
    """
    Attributes:
        created_at (datetime.datetime):
        created_by (str):
        current_draft (int): The number of the latest draft.
        description (str):
        id (str): A generation id.
        updated_at (datetime.datetime):
        name (None | str | Unset):
    """

    created_at: datetime.datetime
    created_by: str
    current_draft: int
    description: str
    id: str
    updated_at: datetime.datetime
    name: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        created_by = self.created_by

        current_draft = self.current_draft

        description = self.description

        id = self.id

        updated_at = self.updated_at.isoformat()

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "created_by": created_by,
                "current_draft": current_draft,
                "description": description,
                "id": id,
                "updated_at": updated_at,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        current_draft = d.pop("current_draft")

        description = d.pop("description")

        id = d.pop("id")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        generation_summary = cls(
            created_at=created_at,
            created_by=created_by,
            current_draft=current_draft,
            description=description,
            id=id,
            updated_at=updated_at,
            name=name,
        )

        generation_summary.additional_properties = d
        return generation_summary

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
