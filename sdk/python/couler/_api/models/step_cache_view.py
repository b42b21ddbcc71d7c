from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.step_cache_status import check_step_cache_status
from ..models.step_cache_status import StepCacheStatus
from typing import cast


T = TypeVar("T", bound="StepCacheView")


@_attrs_define
class StepCacheView:
    """A step's cache verdict in a run.

    Attributes:
        status (StepCacheStatus):
        producer_run (None | str | Unset):
        reason (None | str | Unset): Why the step is not a hit, e.g. `not cached`, `policy off`.
        saved_ms (int | None | Unset): Compute time the step did not spend (hits and steps not needed):
            what the run that computed it took.
    """

    status: StepCacheStatus
    producer_run: None | str | Unset = UNSET
    reason: None | str | Unset = UNSET
    saved_ms: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        status: str = self.status

        producer_run: None | str | Unset
        if isinstance(self.producer_run, Unset):
            producer_run = UNSET
        else:
            producer_run = self.producer_run

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        saved_ms: int | None | Unset
        if isinstance(self.saved_ms, Unset):
            saved_ms = UNSET
        else:
            saved_ms = self.saved_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "status": status,
            }
        )
        if producer_run is not UNSET:
            field_dict["producer_run"] = producer_run
        if reason is not UNSET:
            field_dict["reason"] = reason
        if saved_ms is not UNSET:
            field_dict["saved_ms"] = saved_ms

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        status = check_step_cache_status(d.pop("status"))

        def _parse_producer_run(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        producer_run = _parse_producer_run(d.pop("producer_run", UNSET))

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        def _parse_saved_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        saved_ms = _parse_saved_ms(d.pop("saved_ms", UNSET))

        step_cache_view = cls(
            status=status,
            producer_run=producer_run,
            reason=reason,
            saved_ms=saved_ms,
        )

        step_cache_view.additional_properties = d
        return step_cache_view

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
