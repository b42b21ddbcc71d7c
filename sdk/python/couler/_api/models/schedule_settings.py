from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.catchup_policy import CatchupPolicy
from ..models.catchup_policy import check_catchup_policy
from ..models.overlap import check_overlap
from ..models.overlap import Overlap
from typing import cast
import datetime

if TYPE_CHECKING:
    from ..models.schedule_settings_labels import ScheduleSettingsLabels
    from ..models.schedule_settings_parameters_type_0 import (
        ScheduleSettingsParametersType0,
    )


T = TypeVar("T", bound="ScheduleSettings")


@_attrs_define
class ScheduleSettings:
    """A schedule: a new one (`slug` and `crons` required), or the changes to
    one (absent fields keep their value).

        Attributes:
            catchup (CatchupPolicy | None | Unset):
            catchup_window_secs (int | None | Unset): How old a missed tick may be and still fire (default 3600).
            crons (list[str] | None | Unset): Five-field crons (`0 2 * * *`; `L`, `W`, `#` allowed) or macros
                (`@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`); the schedule
                fires at every instant any of them matches.
            end_at (datetime.datetime | None | Unset): No tick at or after this.
            jitter_secs (int | None | Unset): Each tick is due up to this many seconds after its instant, the
                same on every replica (spreads top-of-the-hour load); at most half
                the shortest gap between ticks.
            labels (ScheduleSettingsLabels | Unset): Labels for search and grouping (Kubernetes label syntax).
            max_catchup (int | None | Unset): Most missed ticks `all` fires (default 10).
            overlap (None | Overlap | Unset):
            parameters (None | ScheduleSettingsParametersType0 | Unset): Parameter values; `{{schedule.time}}` (RFC 3339,
                UTC),
                `{{schedule.localDate}}` and `{{schedule.localTime}}` (on the
                schedule's wall clock) become the tick's nominal instant.
            priority (int | None | Unset):
            slug (None | str | Unset): Its name within the workflow, and its identity (only when
                creating): 1 to 63 lowercase letters, digits or '-'. `default` is
                the workflow's own (the IR's `schedule:`).
            start_at (datetime.datetime | None | Unset): No tick before this.
            timezone (None | str | Unset): IANA time zone the crons are read in (default `UTC`, never the
                server's).
            version (int | None | Unset): The workflow version its runs execute; null or absent: the latest
                at each tick.
    """

    catchup: CatchupPolicy | None | Unset = UNSET
    catchup_window_secs: int | None | Unset = UNSET
    crons: list[str] | None | Unset = UNSET
    end_at: datetime.datetime | None | Unset = UNSET
    jitter_secs: int | None | Unset = UNSET
    labels: ScheduleSettingsLabels | Unset = UNSET
    max_catchup: int | None | Unset = UNSET
    overlap: None | Overlap | Unset = UNSET
    parameters: None | ScheduleSettingsParametersType0 | Unset = UNSET
    priority: int | None | Unset = UNSET
    slug: None | str | Unset = UNSET
    start_at: datetime.datetime | None | Unset = UNSET
    timezone: None | str | Unset = UNSET
    version: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.schedule_settings_parameters_type_0 import (
            ScheduleSettingsParametersType0,
        )  # noqa: PLC0415

        catchup: None | str | Unset
        if isinstance(self.catchup, Unset):
            catchup = UNSET
        elif isinstance(self.catchup, str):
            catchup = self.catchup
        else:
            catchup = self.catchup

        catchup_window_secs: int | None | Unset
        if isinstance(self.catchup_window_secs, Unset):
            catchup_window_secs = UNSET
        else:
            catchup_window_secs = self.catchup_window_secs

        crons: list[str] | None | Unset
        if isinstance(self.crons, Unset):
            crons = UNSET
        elif isinstance(self.crons, list):
            crons = self.crons

        else:
            crons = self.crons

        end_at: None | str | Unset
        if isinstance(self.end_at, Unset):
            end_at = UNSET
        elif isinstance(self.end_at, datetime.datetime):
            end_at = self.end_at.isoformat()
        else:
            end_at = self.end_at

        jitter_secs: int | None | Unset
        if isinstance(self.jitter_secs, Unset):
            jitter_secs = UNSET
        else:
            jitter_secs = self.jitter_secs

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        max_catchup: int | None | Unset
        if isinstance(self.max_catchup, Unset):
            max_catchup = UNSET
        else:
            max_catchup = self.max_catchup

        overlap: None | str | Unset
        if isinstance(self.overlap, Unset):
            overlap = UNSET
        elif isinstance(self.overlap, str):
            overlap = self.overlap
        else:
            overlap = self.overlap

        parameters: dict[str, Any] | None | Unset
        if isinstance(self.parameters, Unset):
            parameters = UNSET
        elif isinstance(self.parameters, ScheduleSettingsParametersType0):
            parameters = self.parameters.to_dict()
        else:
            parameters = self.parameters

        priority: int | None | Unset
        if isinstance(self.priority, Unset):
            priority = UNSET
        else:
            priority = self.priority

        slug: None | str | Unset
        if isinstance(self.slug, Unset):
            slug = UNSET
        else:
            slug = self.slug

        start_at: None | str | Unset
        if isinstance(self.start_at, Unset):
            start_at = UNSET
        elif isinstance(self.start_at, datetime.datetime):
            start_at = self.start_at.isoformat()
        else:
            start_at = self.start_at

        timezone: None | str | Unset
        if isinstance(self.timezone, Unset):
            timezone = UNSET
        else:
            timezone = self.timezone

        version: int | None | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if catchup is not UNSET:
            field_dict["catchup"] = catchup
        if catchup_window_secs is not UNSET:
            field_dict["catchup_window_secs"] = catchup_window_secs
        if crons is not UNSET:
            field_dict["crons"] = crons
        if end_at is not UNSET:
            field_dict["end_at"] = end_at
        if jitter_secs is not UNSET:
            field_dict["jitter_secs"] = jitter_secs
        if labels is not UNSET:
            field_dict["labels"] = labels
        if max_catchup is not UNSET:
            field_dict["max_catchup"] = max_catchup
        if overlap is not UNSET:
            field_dict["overlap"] = overlap
        if parameters is not UNSET:
            field_dict["parameters"] = parameters
        if priority is not UNSET:
            field_dict["priority"] = priority
        if slug is not UNSET:
            field_dict["slug"] = slug
        if start_at is not UNSET:
            field_dict["start_at"] = start_at
        if timezone is not UNSET:
            field_dict["timezone"] = timezone
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.schedule_settings_labels import ScheduleSettingsLabels  # noqa: PLC0415
        from ..models.schedule_settings_parameters_type_0 import (
            ScheduleSettingsParametersType0,
        )  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_catchup(data: object) -> CatchupPolicy | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                catchup_type_0 = check_catchup_policy(data)

                return catchup_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CatchupPolicy | None | Unset, data)

        catchup = _parse_catchup(d.pop("catchup", UNSET))

        def _parse_catchup_window_secs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        catchup_window_secs = _parse_catchup_window_secs(
            d.pop("catchup_window_secs", UNSET)
        )

        def _parse_crons(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                crons_type_0 = cast(list[str], data)

                return crons_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        crons = _parse_crons(d.pop("crons", UNSET))

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

        def _parse_jitter_secs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        jitter_secs = _parse_jitter_secs(d.pop("jitter_secs", UNSET))

        _labels = d.pop("labels", UNSET)
        labels: ScheduleSettingsLabels | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = ScheduleSettingsLabels.from_dict(_labels)

        def _parse_max_catchup(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_catchup = _parse_max_catchup(d.pop("max_catchup", UNSET))

        def _parse_overlap(data: object) -> None | Overlap | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                overlap_type_0 = check_overlap(data)

                return overlap_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Overlap | Unset, data)

        overlap = _parse_overlap(d.pop("overlap", UNSET))

        def _parse_parameters(
            data: object,
        ) -> None | ScheduleSettingsParametersType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                parameters_type_0 = ScheduleSettingsParametersType0.from_dict(data)

                return parameters_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ScheduleSettingsParametersType0 | Unset, data)

        parameters = _parse_parameters(d.pop("parameters", UNSET))

        def _parse_priority(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        priority = _parse_priority(d.pop("priority", UNSET))

        def _parse_slug(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        slug = _parse_slug(d.pop("slug", UNSET))

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

        def _parse_timezone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        timezone = _parse_timezone(d.pop("timezone", UNSET))

        def _parse_version(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        schedule_settings = cls(
            catchup=catchup,
            catchup_window_secs=catchup_window_secs,
            crons=crons,
            end_at=end_at,
            jitter_secs=jitter_secs,
            labels=labels,
            max_catchup=max_catchup,
            overlap=overlap,
            parameters=parameters,
            priority=priority,
            slug=slug,
            start_at=start_at,
            timezone=timezone,
            version=version,
        )

        return schedule_settings
