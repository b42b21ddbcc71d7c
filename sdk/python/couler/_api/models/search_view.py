from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field


from typing import cast

if TYPE_CHECKING:
    from ..models.search_view_configurations_item import SearchViewConfigurationsItem


T = TypeVar("T", bound="SearchView")


@_attrs_define
class SearchView:
    """A hyperparameter search, as planned.

    Attributes:
        configurations (list[SearchViewConfigurationsItem]): The configurations trials run, in order.
        step (str):
        strategy (str): grid, random, halving or llm (random when the LLM could not help).
        warnings (list[str]):
    """

    configurations: list[SearchViewConfigurationsItem]
    step: str
    strategy: str
    warnings: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        configurations = []
        for configurations_item_data in self.configurations:
            configurations_item = configurations_item_data.to_dict()
            configurations.append(configurations_item)

        step = self.step

        strategy = self.strategy

        warnings = self.warnings

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "configurations": configurations,
                "step": step,
                "strategy": strategy,
                "warnings": warnings,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.search_view_configurations_item import (
            SearchViewConfigurationsItem,
        )  # noqa: PLC0415

        d = dict(src_dict)
        configurations = []
        _configurations = d.pop("configurations")
        for configurations_item_data in _configurations:
            configurations_item = SearchViewConfigurationsItem.from_dict(
                configurations_item_data
            )

            configurations.append(configurations_item)

        step = d.pop("step")

        strategy = d.pop("strategy")

        warnings = cast(list[str], d.pop("warnings"))

        search_view = cls(
            configurations=configurations,
            step=step,
            strategy=strategy,
            warnings=warnings,
        )

        search_view.additional_properties = d
        return search_view

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
