from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define


T = TypeVar("T", bound="InputArtifact")


@_attrs_define
class InputArtifact:
    """
    Attributes:
        from_ (str): `{{steps.STEP.outputs.artifacts.NAME}}`
        name (str):
        path (str): Absolute path where the artifact appears.
    """

    from_: str
    name: str
    path: str

    def to_dict(self) -> dict[str, Any]:
        from_ = self.from_

        name = self.name

        path = self.path

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "from": from_,
                "name": name,
                "path": path,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        from_ = d.pop("from")

        name = d.pop("name")

        path = d.pop("path")

        input_artifact = cls(
            from_=from_,
            name=name,
            path=path,
        )

        return input_artifact
