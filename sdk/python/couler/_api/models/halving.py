from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="Halving")


@_attrs_define
class Halving:
    """
    Attributes:
        max_budget (int): Budget of the last rung.
        min_budget (int): Budget (e.g. epochs) of the first rung.
        eta (int | None | Unset): Keep the best 1/eta of trials at each rung (default 3).
    """

    max_budget: int
    min_budget: int
    eta: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        max_budget = self.max_budget

        min_budget = self.min_budget

        eta: int | None | Unset
        if isinstance(self.eta, Unset):
            eta = UNSET
        else:
            eta = self.eta

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "maxBudget": max_budget,
                "minBudget": min_budget,
            }
        )
        if eta is not UNSET:
            field_dict["eta"] = eta

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_budget = d.pop("maxBudget")

        min_budget = d.pop("minBudget")

        def _parse_eta(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        eta = _parse_eta(d.pop("eta", UNSET))

        halving = cls(
            max_budget=max_budget,
            min_budget=min_budget,
            eta=eta,
        )

        return halving
