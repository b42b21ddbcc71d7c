from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime


T = TypeVar("T", bound="LlmUsageView")


@_attrs_define
class LlmUsageView:
    """A tenant's LLM tokens in the current calendar month (UTC).

    Attributes:
        completion_tokens (int):
        month (datetime.date): The month's first day.
        prompt_tokens (int):
        requests (int): Generation requests that spent tokens this month.
        used_tokens (int):
        monthly_budget (int | None | Unset): Tokens per month; absent: unlimited.
        tokens_left (int | None | Unset): What is left this month; absent: unlimited. At 0 generations still
            work, drafted by the offline planner.
    """

    completion_tokens: int
    month: datetime.date
    prompt_tokens: int
    requests: int
    used_tokens: int
    monthly_budget: int | None | Unset = UNSET
    tokens_left: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        completion_tokens = self.completion_tokens

        month = self.month.isoformat()

        prompt_tokens = self.prompt_tokens

        requests = self.requests

        used_tokens = self.used_tokens

        monthly_budget: int | None | Unset
        if isinstance(self.monthly_budget, Unset):
            monthly_budget = UNSET
        else:
            monthly_budget = self.monthly_budget

        tokens_left: int | None | Unset
        if isinstance(self.tokens_left, Unset):
            tokens_left = UNSET
        else:
            tokens_left = self.tokens_left

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "completion_tokens": completion_tokens,
                "month": month,
                "prompt_tokens": prompt_tokens,
                "requests": requests,
                "used_tokens": used_tokens,
            }
        )
        if monthly_budget is not UNSET:
            field_dict["monthly_budget"] = monthly_budget
        if tokens_left is not UNSET:
            field_dict["tokens_left"] = tokens_left

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        completion_tokens = d.pop("completion_tokens")

        month = datetime.date.fromisoformat(d.pop("month"))

        prompt_tokens = d.pop("prompt_tokens")

        requests = d.pop("requests")

        used_tokens = d.pop("used_tokens")

        def _parse_monthly_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        monthly_budget = _parse_monthly_budget(d.pop("monthly_budget", UNSET))

        def _parse_tokens_left(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        tokens_left = _parse_tokens_left(d.pop("tokens_left", UNSET))

        llm_usage_view = cls(
            completion_tokens=completion_tokens,
            month=month,
            prompt_tokens=prompt_tokens,
            requests=requests,
            used_tokens=used_tokens,
            monthly_budget=monthly_budget,
            tokens_left=tokens_left,
        )

        llm_usage_view.additional_properties = d
        return llm_usage_view

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
