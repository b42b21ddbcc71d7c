from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="SplitBudgetView")


@_attrs_define
class SplitBudgetView:
    """Limits of one sub-workflow. An absent field keeps the engine's default
    (200 steps and 512 KiB of manifest for Kubernetes-based engines; none
    for the local engine).

        Attributes:
            max_bytes (int | None | Unset): Estimated manifest bytes.
            max_pods (int | None | Unset):
            max_steps (int | None | Unset):
    """

    max_bytes: int | None | Unset = UNSET
    max_pods: int | None | Unset = UNSET
    max_steps: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        max_bytes: int | None | Unset
        if isinstance(self.max_bytes, Unset):
            max_bytes = UNSET
        else:
            max_bytes = self.max_bytes

        max_pods: int | None | Unset
        if isinstance(self.max_pods, Unset):
            max_pods = UNSET
        else:
            max_pods = self.max_pods

        max_steps: int | None | Unset
        if isinstance(self.max_steps, Unset):
            max_steps = UNSET
        else:
            max_steps = self.max_steps

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if max_bytes is not UNSET:
            field_dict["max_bytes"] = max_bytes
        if max_pods is not UNSET:
            field_dict["max_pods"] = max_pods
        if max_steps is not UNSET:
            field_dict["max_steps"] = max_steps

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_max_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_bytes = _parse_max_bytes(d.pop("max_bytes", UNSET))

        def _parse_max_pods(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_pods = _parse_max_pods(d.pop("max_pods", UNSET))

        def _parse_max_steps(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_steps = _parse_max_steps(d.pop("max_steps", UNSET))

        split_budget_view = cls(
            max_bytes=max_bytes,
            max_pods=max_pods,
            max_steps=max_steps,
        )

        return split_budget_view
