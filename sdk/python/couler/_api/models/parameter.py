from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="Parameter")


@_attrs_define
class Parameter:
    """A workflow input.

    Attributes:
        name (str):
        default (bool | float | None | str | Unset): Used when a run does not set the parameter; without it the
            parameter is required.
        description (None | str | Unset):
        enum (list[bool | float | str] | Unset): When set, the value must be one of these.
    """

    name: str
    default: bool | float | None | str | Unset = UNSET
    description: None | str | Unset = UNSET
    enum: list[bool | float | str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        default: bool | float | None | str | Unset
        if isinstance(self.default, Unset):
            default = UNSET
        else:
            default = self.default

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        enum: list[bool | float | str] | Unset = UNSET
        if not isinstance(self.enum, Unset):
            enum = []
            for enum_item_data in self.enum:
                enum_item: bool | float | str
                enum_item = enum_item_data
                enum.append(enum_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if default is not UNSET:
            field_dict["default"] = default
        if description is not UNSET:
            field_dict["description"] = description
        if enum is not UNSET:
            field_dict["enum"] = enum

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        def _parse_default(data: object) -> bool | float | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | float | None | str | Unset, data)

        default = _parse_default(d.pop("default", UNSET))

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        _enum = d.pop("enum", UNSET)
        enum: list[bool | float | str] | Unset = UNSET
        if _enum is not UNSET:
            enum = []
            for enum_item_data in _enum:

                def _parse_enum_item(data: object) -> bool | float | str:
                    return cast(bool | float | str, data)

                enum_item = _parse_enum_item(enum_item_data)

                enum.append(enum_item)

        parameter = cls(
            name=name,
            default=default,
            description=description,
            enum=enum,
        )

        return parameter
