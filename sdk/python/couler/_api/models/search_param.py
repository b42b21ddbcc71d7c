from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.param_kind import check_param_kind
from ..models.param_kind import ParamKind
from typing import cast


T = TypeVar("T", bound="SearchParam")


@_attrs_define
class SearchParam:
    """One dimension of a search space.

    Attributes:
        type_ (ParamKind):
        log (bool | Unset): Sample on a log scale (`double`).
        max_ (float | None | Unset): Upper bound, inclusive (`int`, `double`).
        min_ (float | None | Unset): Lower bound (`int`, `double`).
        step (float | None | Unset): Grid spacing; required for `double` under the `grid` strategy.
        values (list[bool | float | str] | Unset): Choices (`categorical`).
    """

    type_: ParamKind
    log: bool | Unset = UNSET
    max_: float | None | Unset = UNSET
    min_: float | None | Unset = UNSET
    step: float | None | Unset = UNSET
    values: list[bool | float | str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        type_: str = self.type_

        log = self.log

        max_: float | None | Unset
        if isinstance(self.max_, Unset):
            max_ = UNSET
        else:
            max_ = self.max_

        min_: float | None | Unset
        if isinstance(self.min_, Unset):
            min_ = UNSET
        else:
            min_ = self.min_

        step: float | None | Unset
        if isinstance(self.step, Unset):
            step = UNSET
        else:
            step = self.step

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
                "type": type_,
            }
        )
        if log is not UNSET:
            field_dict["log"] = log
        if max_ is not UNSET:
            field_dict["max"] = max_
        if min_ is not UNSET:
            field_dict["min"] = min_
        if step is not UNSET:
            field_dict["step"] = step
        if values is not UNSET:
            field_dict["values"] = values

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = check_param_kind(d.pop("type"))

        log = d.pop("log", UNSET)

        def _parse_max_(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        max_ = _parse_max_(d.pop("max", UNSET))

        def _parse_min_(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        min_ = _parse_min_(d.pop("min", UNSET))

        def _parse_step(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        step = _parse_step(d.pop("step", UNSET))

        _values = d.pop("values", UNSET)
        values: list[bool | float | str] | Unset = UNSET
        if _values is not UNSET:
            values = []
            for values_item_data in _values:

                def _parse_values_item(data: object) -> bool | float | str:
                    return cast(bool | float | str, data)

                values_item = _parse_values_item(values_item_data)

                values.append(values_item)

        search_param = cls(
            type_=type_,
            log=log,
            max_=max_,
            min_=min_,
            step=step,
            values=values,
        )

        return search_param
