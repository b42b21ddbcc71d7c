from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.tick_kind import check_tick_kind
from ..models.tick_kind import TickKind
from ..models.tick_outcome import check_tick_outcome
from ..models.tick_outcome import TickOutcome
from typing import cast
import datetime


T = TypeVar("T", bound="TickView")


@_attrs_define
class TickView:
    """One tick of a schedule and what became of it.

    Attributes:
        kind (TickKind): Whether a tick was handled on time.
        nominal_at (datetime.datetime): The nominal instant, UTC (the run's `trigger.scheduled_for`).
        outcome (TickOutcome): What became of a tick.
        recorded_at (datetime.datetime):
        detail (None | str | Unset): Why it was skipped, what it cancelled, or why it failed.
        run (None | str | Unset):
    """

    kind: TickKind
    nominal_at: datetime.datetime
    outcome: TickOutcome
    recorded_at: datetime.datetime
    detail: None | str | Unset = UNSET
    run: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind: str = self.kind

        nominal_at = self.nominal_at.isoformat()

        outcome: str = self.outcome

        recorded_at = self.recorded_at.isoformat()

        detail: None | str | Unset
        if isinstance(self.detail, Unset):
            detail = UNSET
        else:
            detail = self.detail

        run: None | str | Unset
        if isinstance(self.run, Unset):
            run = UNSET
        else:
            run = self.run

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "nominal_at": nominal_at,
                "outcome": outcome,
                "recorded_at": recorded_at,
            }
        )
        if detail is not UNSET:
            field_dict["detail"] = detail
        if run is not UNSET:
            field_dict["run"] = run

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = check_tick_kind(d.pop("kind"))

        nominal_at = datetime.datetime.fromisoformat(d.pop("nominal_at"))

        outcome = check_tick_outcome(d.pop("outcome"))

        recorded_at = datetime.datetime.fromisoformat(d.pop("recorded_at"))

        def _parse_detail(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        detail = _parse_detail(d.pop("detail", UNSET))

        def _parse_run(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        run = _parse_run(d.pop("run", UNSET))

        tick_view = cls(
            kind=kind,
            nominal_at=nominal_at,
            outcome=outcome,
            recorded_at=recorded_at,
            detail=detail,
            run=run,
        )

        tick_view.additional_properties = d
        return tick_view

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
