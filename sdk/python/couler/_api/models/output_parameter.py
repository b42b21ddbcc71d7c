from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="OutputParameter")


@_attrs_define
class OutputParameter:
    """A value read from a file the step writes.

    Attributes:
        name (str):
        path (str): Absolute path of the file holding the value.
        default (bool | float | None | str | Unset): Used when the file is absent.
    """

    name: str
    path: str
    default: bool | float | None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        path = self.path

        default: bool | float | None | str | Unset
        if isinstance(self.default, Unset):
            default = UNSET
        else:
            default = self.default

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "path": path,
            }
        )
        if default is not UNSET:
            field_dict["default"] = default

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        path = d.pop("path")

        def _parse_default(data: object) -> bool | float | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | float | None | str | Unset, data)

        default = _parse_default(d.pop("default", UNSET))

        output_parameter = cls(
            name=name,
            path=path,
            default=default,
        )

        return output_parameter
