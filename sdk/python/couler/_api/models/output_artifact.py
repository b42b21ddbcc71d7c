from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define


T = TypeVar("T", bound="OutputArtifact")


@_attrs_define
class OutputArtifact:
    """A file or directory the step writes, stored content-addressed.

    Attributes:
        name (str):
        path (str):
    """

    name: str
    path: str

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        path = self.path

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "path": path,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        path = d.pop("path")

        output_artifact = cls(
            name=name,
            path=path,
        )

        return output_artifact
