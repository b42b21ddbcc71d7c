from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="GenerateBody")


@_attrs_define
class GenerateBody:
    """What to generate.

    Attributes:
        description (str): What the workflow should do, in English or Chinese.
        name (None | str | Unset): The workflow's name (a DNS label, as every workflow name); derived
            from the description when absent.
    """

    description: str
    name: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        description = self.description

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "description": description,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        description = d.pop("description")

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        generate_body = cls(
            description=description,
            name=name,
        )

        return generate_body
