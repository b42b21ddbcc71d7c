from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field


if TYPE_CHECKING:
    from ..models.search_param import SearchParam


T = TypeVar("T", bound="TuneSpace")


@_attrs_define
class TuneSpace:
    """Hyperparameters by name, referenced as `{{trial.parameters.NAME}}`."""

    additional_properties: dict[str, SearchParam] = _attrs_field(
        init=False, factory=dict
    )

    def to_dict(self) -> dict[str, Any]:
        field_dict: dict[str, Any] = {}
        for prop_name, prop in self.additional_properties.items():
            field_dict[prop_name] = prop.to_dict()

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.search_param import SearchParam  # noqa: PLC0415

        d = dict(src_dict)
        tune_space = cls()

        additional_properties = {}
        for prop_name, prop_dict in d.items():
            additional_property = SearchParam.from_dict(prop_dict)

            additional_properties[prop_name] = additional_property

        tune_space.additional_properties = additional_properties
        return tune_space

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> SearchParam:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: SearchParam) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
