from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.backfill_state import BackfillState
from ..models.backfill_state import check_backfill_state
from ..models.reprocess import check_reprocess
from ..models.reprocess import Reprocess
from typing import cast
import datetime

if TYPE_CHECKING:
    from ..models.backfill_counts import BackfillCounts


T = TypeVar("T", bound="BackfillView")


@_attrs_define
class BackfillView:
    """
    Attributes:
        dry_run (bool):
        from_ (datetime.datetime):
        max_active_runs (int):
        reprocess (Reprocess): Which of the range's instants a backfill runs.
        schedule (str):
        to (datetime.datetime):
        counts (BackfillCounts | None | Unset):
        created_at (datetime.datetime | None | Unset):
        created_by (None | str | Unset):
        finished_at (datetime.datetime | None | Unset):
        id (None | str | Unset):
        instants (list[datetime.datetime] | Unset): The instants it runs (a dry run's answer; empty otherwise).
        state (BackfillState | None | Unset):
    """

    dry_run: bool
    from_: datetime.datetime
    max_active_runs: int
    reprocess: Reprocess
    schedule: str
    to: datetime.datetime
    counts: BackfillCounts | None | Unset = UNSET
    created_at: datetime.datetime | None | Unset = UNSET
    created_by: None | str | Unset = UNSET
    finished_at: datetime.datetime | None | Unset = UNSET
    id: None | str | Unset = UNSET
    instants: list[datetime.datetime] | Unset = UNSET
    state: BackfillState | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.backfill_counts import BackfillCounts  # noqa: PLC0415

        dry_run = self.dry_run

        from_ = self.from_.isoformat()

        max_active_runs = self.max_active_runs

        reprocess: str = self.reprocess

        schedule = self.schedule

        to = self.to.isoformat()

        counts: dict[str, Any] | None | Unset
        if isinstance(self.counts, Unset):
            counts = UNSET
        elif isinstance(self.counts, BackfillCounts):
            counts = self.counts.to_dict()
        else:
            counts = self.counts

        created_at: None | str | Unset
        if isinstance(self.created_at, Unset):
            created_at = UNSET
        elif isinstance(self.created_at, datetime.datetime):
            created_at = self.created_at.isoformat()
        else:
            created_at = self.created_at

        created_by: None | str | Unset
        if isinstance(self.created_by, Unset):
            created_by = UNSET
        else:
            created_by = self.created_by

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        instants: list[str] | Unset = UNSET
        if not isinstance(self.instants, Unset):
            instants = []
            for instants_item_data in self.instants:
                instants_item = instants_item_data.isoformat()
                instants.append(instants_item)

        state: None | str | Unset
        if isinstance(self.state, Unset):
            state = UNSET
        elif isinstance(self.state, str):
            state = self.state
        else:
            state = self.state

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dry_run": dry_run,
                "from": from_,
                "max_active_runs": max_active_runs,
                "reprocess": reprocess,
                "schedule": schedule,
                "to": to,
            }
        )
        if counts is not UNSET:
            field_dict["counts"] = counts
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if created_by is not UNSET:
            field_dict["created_by"] = created_by
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if id is not UNSET:
            field_dict["id"] = id
        if instants is not UNSET:
            field_dict["instants"] = instants
        if state is not UNSET:
            field_dict["state"] = state

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.backfill_counts import BackfillCounts  # noqa: PLC0415

        d = dict(src_dict)
        dry_run = d.pop("dry_run")

        from_ = datetime.datetime.fromisoformat(d.pop("from"))

        max_active_runs = d.pop("max_active_runs")

        reprocess = check_reprocess(d.pop("reprocess"))

        schedule = d.pop("schedule")

        to = datetime.datetime.fromisoformat(d.pop("to"))

        def _parse_counts(data: object) -> BackfillCounts | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                counts_type_0 = BackfillCounts.from_dict(data)

                return counts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BackfillCounts | None | Unset, data)

        counts = _parse_counts(d.pop("counts", UNSET))

        def _parse_created_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                created_at_type_0 = datetime.datetime.fromisoformat(data)

                return created_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        created_at = _parse_created_at(d.pop("created_at", UNSET))

        def _parse_created_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_by = _parse_created_by(d.pop("created_by", UNSET))

        def _parse_finished_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        _instants = d.pop("instants", UNSET)
        instants: list[datetime.datetime] | Unset = UNSET
        if _instants is not UNSET:
            instants = []
            for instants_item_data in _instants:
                instants_item = datetime.datetime.fromisoformat(instants_item_data)

                instants.append(instants_item)

        def _parse_state(data: object) -> BackfillState | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                state_type_0 = check_backfill_state(data)

                return state_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BackfillState | None | Unset, data)

        state = _parse_state(d.pop("state", UNSET))

        backfill_view = cls(
            dry_run=dry_run,
            from_=from_,
            max_active_runs=max_active_runs,
            reprocess=reprocess,
            schedule=schedule,
            to=to,
            counts=counts,
            created_at=created_at,
            created_by=created_by,
            finished_at=finished_at,
            id=id,
            instants=instants,
            state=state,
        )

        backfill_view.additional_properties = d
        return backfill_view

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
