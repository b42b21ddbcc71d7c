from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="Schedule")


@_attrs_define
class Schedule:
    """A cron schedule.

    Attributes:
        cron (str): Five-field cron expression (`"0 2 * * *"`; `L`, `W` and `#` allowed)
            or a macro such as `@daily`. It becomes the workflow's `default`
            schedule in the control plane, which fires it on every engine.
        timezone (None | str | Unset): IANA time zone, e.g. `Europe/Berlin`; UTC when absent (never the
            server's zone).
    """

    cron: str
    timezone: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        cron = self.cron

        timezone: None | str | Unset
        if isinstance(self.timezone, Unset):
            timezone = UNSET
        else:
            timezone = self.timezone

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cron": cron,
            }
        )
        if timezone is not UNSET:
            field_dict["timezone"] = timezone

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cron = d.pop("cron")

        def _parse_timezone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        timezone = _parse_timezone(d.pop("timezone", UNSET))

        schedule = cls(
            cron=cron,
            timezone=timezone,
        )

        return schedule
