from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="SetBudget")


@_attrs_define
class SetBudget:
    """
    Attributes:
        monthly_budget (int | None | Unset): Tokens per calendar month; `null`: unlimited.
    """

    monthly_budget: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        monthly_budget: int | None | Unset
        if isinstance(self.monthly_budget, Unset):
            monthly_budget = UNSET
        else:
            monthly_budget = self.monthly_budget

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if monthly_budget is not UNSET:
            field_dict["monthly_budget"] = monthly_budget

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_monthly_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        monthly_budget = _parse_monthly_budget(d.pop("monthly_budget", UNSET))

        set_budget = cls(
            monthly_budget=monthly_budget,
        )

        return set_budget
