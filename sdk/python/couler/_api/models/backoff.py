from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="Backoff")


@_attrs_define
class Backoff:
    """
    Attributes:
        duration (int | str): A duration such as "90s", "30m", "1h 30m", "7d", or whole seconds.
        factor (int | None | Unset): Each wait is the previous one times this (default 2).
        max_duration (int | None | str | Unset): Cap on a single wait.
    """

    duration: int | str
    factor: int | None | Unset = UNSET
    max_duration: int | None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        duration: int | str
        duration = self.duration

        factor: int | None | Unset
        if isinstance(self.factor, Unset):
            factor = UNSET
        else:
            factor = self.factor

        max_duration: int | None | str | Unset
        if isinstance(self.max_duration, Unset):
            max_duration = UNSET
        else:
            max_duration = self.max_duration

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "duration": duration,
            }
        )
        if factor is not UNSET:
            field_dict["factor"] = factor
        if max_duration is not UNSET:
            field_dict["maxDuration"] = max_duration

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_duration(data: object) -> int | str:
            return cast(int | str, data)

        duration = _parse_duration(d.pop("duration"))

        def _parse_factor(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        factor = _parse_factor(d.pop("factor", UNSET))

        def _parse_max_duration(data: object) -> int | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | str | Unset, data)

        max_duration = _parse_max_duration(d.pop("maxDuration", UNSET))

        backoff = cls(
            duration=duration,
            factor=factor,
            max_duration=max_duration,
        )

        return backoff
