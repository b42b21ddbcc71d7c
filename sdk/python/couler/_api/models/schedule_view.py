from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.catchup_policy import CatchupPolicy
from ..models.catchup_policy import check_catchup_policy
from ..models.overlap import check_overlap
from ..models.overlap import Overlap
from typing import cast
import datetime

if TYPE_CHECKING:
    from ..models.schedule_view_labels import ScheduleViewLabels
    from ..models.schedule_view_parameters import ScheduleViewParameters


T = TypeVar("T", bound="ScheduleView")


@_attrs_define
class ScheduleView:
    """A schedule and where it stands.

    Attributes:
        catchup (CatchupPolicy): What to do with runs missed while the control plane was down.
        catchup_window_secs (int):
        created_at (datetime.datetime):
        created_by (str):
        crons (list[str]):
        generation (int): Bumped by every change of what decides the ticks.
        id (str): A schedule id.
        jitter_secs (int):
        labels (ScheduleViewLabels):
        max_catchup (int):
        overlap (Overlap): What a tick does while the schedule's previous run is still active.
        parameters (ScheduleViewParameters):
        paused (bool):
        priority (int):
        slug (str):
        source (str): `workflow`: the IR's `schedule:` (edit the workflow to change its
            calendar); `api`: made through this API.
        timezone (str):
        updated_at (datetime.datetime):
        workflow (str): A workflow id.
        end_at (datetime.datetime | None | Unset):
        last_tick (datetime.datetime | None | Unset): The nominal instant of the last tick handled (fired or skipped).
        next_tick (datetime.datetime | None | Unset): The nominal instant of the next tick; null when paused or ended.
        paused_at (datetime.datetime | None | Unset):
        paused_by (None | str | Unset):
        paused_reason (None | str | Unset):
        start_at (datetime.datetime | None | Unset):
        version (int | None | Unset):
    """

    catchup: CatchupPolicy
    catchup_window_secs: int
    created_at: datetime.datetime
    created_by: str
    crons: list[str]
    generation: int
    id: str
    jitter_secs: int
    labels: ScheduleViewLabels
    max_catchup: int
    overlap: Overlap
    parameters: ScheduleViewParameters
    paused: bool
    priority: int
    slug: str
    source: str
    timezone: str
    updated_at: datetime.datetime
    workflow: str
    end_at: datetime.datetime | None | Unset = UNSET
    last_tick: datetime.datetime | None | Unset = UNSET
    next_tick: datetime.datetime | None | Unset = UNSET
    paused_at: datetime.datetime | None | Unset = UNSET
    paused_by: None | str | Unset = UNSET
    paused_reason: None | str | Unset = UNSET
    start_at: datetime.datetime | None | Unset = UNSET
    version: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        catchup: str = self.catchup

        catchup_window_secs = self.catchup_window_secs

        created_at = self.created_at.isoformat()

        created_by = self.created_by

        crons = self.crons

        generation = self.generation

        id = self.id

        jitter_secs = self.jitter_secs

        labels = self.labels.to_dict()

        max_catchup = self.max_catchup

        overlap: str = self.overlap

        parameters = self.parameters.to_dict()

        paused = self.paused

        priority = self.priority

        slug = self.slug

        source = self.source

        timezone = self.timezone

        updated_at = self.updated_at.isoformat()

        workflow = self.workflow

        end_at: None | str | Unset
        if isinstance(self.end_at, Unset):
            end_at = UNSET
        elif isinstance(self.end_at, datetime.datetime):
            end_at = self.end_at.isoformat()
        else:
            end_at = self.end_at

        last_tick: None | str | Unset
        if isinstance(self.last_tick, Unset):
            last_tick = UNSET
        elif isinstance(self.last_tick, datetime.datetime):
            last_tick = self.last_tick.isoformat()
        else:
            last_tick = self.last_tick

        next_tick: None | str | Unset
        if isinstance(self.next_tick, Unset):
            next_tick = UNSET
        elif isinstance(self.next_tick, datetime.datetime):
            next_tick = self.next_tick.isoformat()
        else:
            next_tick = self.next_tick

        paused_at: None | str | Unset
        if isinstance(self.paused_at, Unset):
            paused_at = UNSET
        elif isinstance(self.paused_at, datetime.datetime):
            paused_at = self.paused_at.isoformat()
        else:
            paused_at = self.paused_at

        paused_by: None | str | Unset
        if isinstance(self.paused_by, Unset):
            paused_by = UNSET
        else:
            paused_by = self.paused_by

        paused_reason: None | str | Unset
        if isinstance(self.paused_reason, Unset):
            paused_reason = UNSET
        else:
            paused_reason = self.paused_reason

        start_at: None | str | Unset
        if isinstance(self.start_at, Unset):
            start_at = UNSET
        elif isinstance(self.start_at, datetime.datetime):
            start_at = self.start_at.isoformat()
        else:
            start_at = self.start_at

        version: int | None | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "catchup": catchup,
                "catchup_window_secs": catchup_window_secs,
                "created_at": created_at,
                "created_by": created_by,
                "crons": crons,
                "generation": generation,
                "id": id,
                "jitter_secs": jitter_secs,
                "labels": labels,
                "max_catchup": max_catchup,
                "overlap": overlap,
                "parameters": parameters,
                "paused": paused,
                "priority": priority,
                "slug": slug,
                "source": source,
                "timezone": timezone,
                "updated_at": updated_at,
                "workflow": workflow,
            }
        )
        if end_at is not UNSET:
            field_dict["end_at"] = end_at
        if last_tick is not UNSET:
            field_dict["last_tick"] = last_tick
        if next_tick is not UNSET:
            field_dict["next_tick"] = next_tick
        if paused_at is not UNSET:
            field_dict["paused_at"] = paused_at
        if paused_by is not UNSET:
            field_dict["paused_by"] = paused_by
        if paused_reason is not UNSET:
            field_dict["paused_reason"] = paused_reason
        if start_at is not UNSET:
            field_dict["start_at"] = start_at
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.schedule_view_labels import ScheduleViewLabels  # noqa: PLC0415
        from ..models.schedule_view_parameters import ScheduleViewParameters  # noqa: PLC0415

        d = dict(src_dict)
        catchup = check_catchup_policy(d.pop("catchup"))

        catchup_window_secs = d.pop("catchup_window_secs")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        crons = cast(list[str], d.pop("crons"))

        generation = d.pop("generation")

        id = d.pop("id")

        jitter_secs = d.pop("jitter_secs")

        labels = ScheduleViewLabels.from_dict(d.pop("labels"))

        max_catchup = d.pop("max_catchup")

        overlap = check_overlap(d.pop("overlap"))

        parameters = ScheduleViewParameters.from_dict(d.pop("parameters"))

        paused = d.pop("paused")

        priority = d.pop("priority")

        slug = d.pop("slug")

        source = d.pop("source")

        timezone = d.pop("timezone")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        workflow = d.pop("workflow")

        def _parse_end_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                end_at_type_0 = datetime.datetime.fromisoformat(data)

                return end_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        end_at = _parse_end_at(d.pop("end_at", UNSET))

        def _parse_last_tick(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_tick_type_0 = datetime.datetime.fromisoformat(data)

                return last_tick_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_tick = _parse_last_tick(d.pop("last_tick", UNSET))

        def _parse_next_tick(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_tick_type_0 = datetime.datetime.fromisoformat(data)

                return next_tick_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        next_tick = _parse_next_tick(d.pop("next_tick", UNSET))

        def _parse_paused_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                paused_at_type_0 = datetime.datetime.fromisoformat(data)

                return paused_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        paused_at = _parse_paused_at(d.pop("paused_at", UNSET))

        def _parse_paused_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        paused_by = _parse_paused_by(d.pop("paused_by", UNSET))

        def _parse_paused_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        paused_reason = _parse_paused_reason(d.pop("paused_reason", UNSET))

        def _parse_start_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                start_at_type_0 = datetime.datetime.fromisoformat(data)

                return start_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        start_at = _parse_start_at(d.pop("start_at", UNSET))

        def _parse_version(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        schedule_view = cls(
            catchup=catchup,
            catchup_window_secs=catchup_window_secs,
            created_at=created_at,
            created_by=created_by,
            crons=crons,
            generation=generation,
            id=id,
            jitter_secs=jitter_secs,
            labels=labels,
            max_catchup=max_catchup,
            overlap=overlap,
            parameters=parameters,
            paused=paused,
            priority=priority,
            slug=slug,
            source=source,
            timezone=timezone,
            updated_at=updated_at,
            workflow=workflow,
            end_at=end_at,
            last_tick=last_tick,
            next_tick=next_tick,
            paused_at=paused_at,
            paused_by=paused_by,
            paused_reason=paused_reason,
            start_at=start_at,
            version=version,
        )

        schedule_view.additional_properties = d
        return schedule_view

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
