from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.operator import check_operator
from ..models.operator import Operator
from typing import cast


T = TypeVar("T", bound="Condition")


@_attrs_define
class Condition:
    """One condition: `input operator value` (or `values` for `in`/`notin`).

    Attributes:
        input_ (str): Usually a reference, e.g. `{{steps.flip.outputs.result}}`.
        operator (Operator):
        value (bool | float | None | str | Unset):
        values (list[bool | float | str] | Unset):
    """

    input_: str
    operator: Operator
    value: bool | float | None | str | Unset = UNSET
    values: list[bool | float | str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        input_ = self.input_

        operator: str = self.operator

        value: bool | float | None | str | Unset
        if isinstance(self.value, Unset):
            value = UNSET
        else:
            value = self.value

        values: list[bool | float | str] | Unset = UNSET
        if not isinstance(self.values, Unset):
            values = []
            for values_item_data in self.values:
                values_item: bool | float | str
                values_item = values_item_data
                values.append(values_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "input": input_,
                "operator": operator,
            }
        )
        if value is not UNSET:
            field_dict["value"] = value
        if values is not UNSET:
            field_dict["values"] = values

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        input_ = d.pop("input")

        operator = check_operator(d.pop("operator"))

        def _parse_value(data: object) -> bool | float | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | float | None | str | Unset, data)

        value = _parse_value(d.pop("value", UNSET))

        _values = d.pop("values", UNSET)
        values: list[bool | float | str] | Unset = UNSET
        if _values is not UNSET:
            values = []
            for values_item_data in _values:

                def _parse_values_item(data: object) -> bool | float | str:
                    return cast(bool | float | str, data)

                values_item = _parse_values_item(values_item_data)

                values.append(values_item)

        condition = cls(
            input_=input_,
            operator=operator,
            value=value,
            values=values,
        )

        return condition
