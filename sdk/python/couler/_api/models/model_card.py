from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="ModelCard")


@_attrs_define
class ModelCard:
    """What the LLM strategy is told about the model.

    Attributes:
        name (str):
        structure (None | str | Unset):
    """

    name: str
    structure: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        structure: None | str | Unset
        if isinstance(self.structure, Unset):
            structure = UNSET
        else:
            structure = self.structure

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if structure is not UNSET:
            field_dict["structure"] = structure

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        def _parse_structure(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        structure = _parse_structure(d.pop("structure", UNSET))

        model_card = cls(
            name=name,
            structure=structure,
        )

        return model_card
