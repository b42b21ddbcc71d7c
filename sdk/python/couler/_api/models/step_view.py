from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.step_status import check_step_status
from ..models.step_status import StepStatus
from typing import cast
import datetime

if TYPE_CHECKING:
    from ..models.step_cache_view import StepCacheView
    from ..models.step_view_outputs import StepViewOutputs


T = TypeVar("T", bound="StepView")


@_attrs_define
class StepView:
    """
    Attributes:
        attempt (int):
        name (str):
        outputs (StepViewOutputs):
        status (StepStatus): `pending → running → succeeded | failed | skipped | cached | cancelled`
        cache (None | StepCacheView | Unset):
        cpu_ms (int | None | Unset): CPU time (user + system) of its last attempt, where measured.
        engine_ref (None | str | Unset): The engine's name for the step (a pod, a task instance, a try
            directory).
        exit_code (int | None | Unset): The exit code of its last attempt, where it exited.
        finished_at (datetime.datetime | None | Unset):
        max_rss_kb (int | None | Unset): Peak resident memory of its last attempt, where measured.
        message (None | str | Unset):
        started_at (datetime.datetime | None | Unset):
        wall_ms (int | None | Unset): Wall-clock time of its last attempt, as the engine measured it.
    """

    attempt: int
    name: str
    outputs: StepViewOutputs
    status: StepStatus
    cache: None | StepCacheView | Unset = UNSET
    cpu_ms: int | None | Unset = UNSET
    engine_ref: None | str | Unset = UNSET
    exit_code: int | None | Unset = UNSET
    finished_at: datetime.datetime | None | Unset = UNSET
    max_rss_kb: int | None | Unset = UNSET
    message: None | str | Unset = UNSET
    started_at: datetime.datetime | None | Unset = UNSET
    wall_ms: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.step_cache_view import StepCacheView  # noqa: PLC0415

        attempt = self.attempt

        name = self.name

        outputs = self.outputs.to_dict()

        status: str = self.status

        cache: dict[str, Any] | None | Unset
        if isinstance(self.cache, Unset):
            cache = UNSET
        elif isinstance(self.cache, StepCacheView):
            cache = self.cache.to_dict()
        else:
            cache = self.cache

        cpu_ms: int | None | Unset
        if isinstance(self.cpu_ms, Unset):
            cpu_ms = UNSET
        else:
            cpu_ms = self.cpu_ms

        engine_ref: None | str | Unset
        if isinstance(self.engine_ref, Unset):
            engine_ref = UNSET
        else:
            engine_ref = self.engine_ref

        exit_code: int | None | Unset
        if isinstance(self.exit_code, Unset):
            exit_code = UNSET
        else:
            exit_code = self.exit_code

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        max_rss_kb: int | None | Unset
        if isinstance(self.max_rss_kb, Unset):
            max_rss_kb = UNSET
        else:
            max_rss_kb = self.max_rss_kb

        message: None | str | Unset
        if isinstance(self.message, Unset):
            message = UNSET
        else:
            message = self.message

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        elif isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        wall_ms: int | None | Unset
        if isinstance(self.wall_ms, Unset):
            wall_ms = UNSET
        else:
            wall_ms = self.wall_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "name": name,
                "outputs": outputs,
                "status": status,
            }
        )
        if cache is not UNSET:
            field_dict["cache"] = cache
        if cpu_ms is not UNSET:
            field_dict["cpu_ms"] = cpu_ms
        if engine_ref is not UNSET:
            field_dict["engine_ref"] = engine_ref
        if exit_code is not UNSET:
            field_dict["exit_code"] = exit_code
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if max_rss_kb is not UNSET:
            field_dict["max_rss_kb"] = max_rss_kb
        if message is not UNSET:
            field_dict["message"] = message
        if started_at is not UNSET:
            field_dict["started_at"] = started_at
        if wall_ms is not UNSET:
            field_dict["wall_ms"] = wall_ms

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.step_cache_view import StepCacheView  # noqa: PLC0415
        from ..models.step_view_outputs import StepViewOutputs  # noqa: PLC0415

        d = dict(src_dict)
        attempt = d.pop("attempt")

        name = d.pop("name")

        outputs = StepViewOutputs.from_dict(d.pop("outputs"))

        status = check_step_status(d.pop("status"))

        def _parse_cache(data: object) -> None | StepCacheView | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                cache_type_0 = StepCacheView.from_dict(data)

                return cache_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StepCacheView | Unset, data)

        cache = _parse_cache(d.pop("cache", UNSET))

        def _parse_cpu_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        cpu_ms = _parse_cpu_ms(d.pop("cpu_ms", UNSET))

        def _parse_engine_ref(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        engine_ref = _parse_engine_ref(d.pop("engine_ref", UNSET))

        def _parse_exit_code(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        exit_code = _parse_exit_code(d.pop("exit_code", UNSET))

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

        def _parse_max_rss_kb(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_rss_kb = _parse_max_rss_kb(d.pop("max_rss_kb", UNSET))

        def _parse_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message = _parse_message(d.pop("message", UNSET))

        def _parse_started_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        def _parse_wall_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        wall_ms = _parse_wall_ms(d.pop("wall_ms", UNSET))

        step_view = cls(
            attempt=attempt,
            name=name,
            outputs=outputs,
            status=status,
            cache=cache,
            cpu_ms=cpu_ms,
            engine_ref=engine_ref,
            exit_code=exit_code,
            finished_at=finished_at,
            max_rss_kb=max_rss_kb,
            message=message,
            started_at=started_at,
            wall_ms=wall_ms,
        )

        step_view.additional_properties = d
        return step_view

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
