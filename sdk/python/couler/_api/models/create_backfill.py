from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.reprocess import check_reprocess
from ..models.reprocess import Reprocess
from typing import cast
import datetime


T = TypeVar("T", bound="CreateBackfill")


@_attrs_define
class CreateBackfill:
    """A backfill to create.

    Attributes:
        from_ (datetime.datetime): The first instant of the range (inclusive).
        to (datetime.datetime): The end of the range (exclusive); not after now.
        dry_run (bool | Unset): Only list the instants it would run; nothing is stored.
        max_active_runs (int | None | Unset): Runs of the backfill active at once, 1 to 100 (default 1).
        reprocess (Reprocess | Unset): Which of the range's instants a backfill runs.
    """

    from_: datetime.datetime
    to: datetime.datetime
    dry_run: bool | Unset = UNSET
    max_active_runs: int | None | Unset = UNSET
    reprocess: Reprocess | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from_ = self.from_.isoformat()

        to = self.to.isoformat()

        dry_run = self.dry_run

        max_active_runs: int | None | Unset
        if isinstance(self.max_active_runs, Unset):
            max_active_runs = UNSET
        else:
            max_active_runs = self.max_active_runs

        reprocess: str | Unset = UNSET
        if not isinstance(self.reprocess, Unset):
            reprocess = self.reprocess

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "from": from_,
                "to": to,
            }
        )
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run
        if max_active_runs is not UNSET:
            field_dict["max_active_runs"] = max_active_runs
        if reprocess is not UNSET:
            field_dict["reprocess"] = reprocess

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        from_ = datetime.datetime.fromisoformat(d.pop("from"))

        to = datetime.datetime.fromisoformat(d.pop("to"))

        dry_run = d.pop("dry_run", UNSET)

        def _parse_max_active_runs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_active_runs = _parse_max_active_runs(d.pop("max_active_runs", UNSET))

        _reprocess = d.pop("reprocess", UNSET)
        reprocess: Reprocess | Unset
        if isinstance(_reprocess, Unset):
            reprocess = UNSET
        else:
            reprocess = check_reprocess(_reprocess)

        create_backfill = cls(
            from_=from_,
            to=to,
            dry_run=dry_run,
            max_active_runs=max_active_runs,
            reprocess=reprocess,
        )

        return create_backfill
