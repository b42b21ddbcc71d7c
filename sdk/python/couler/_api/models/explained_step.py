from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.cache_scope_view import CacheScopeView
from ..models.cache_scope_view import check_cache_scope_view
from ..models.step_cache_status import check_step_cache_status
from ..models.step_cache_status import StepCacheStatus
from typing import cast

if TYPE_CHECKING:
    from ..models.own_entry import OwnEntry


T = TypeVar("T", bound="ExplainedStep")


@_attrs_define
class ExplainedStep:
    """
    Attributes:
        scope (CacheScopeView): Who may reuse the step's result.
        status (StepCacheStatus):
        step (str):
        entry (None | OwnEntry | Unset):
        reason (None | str | Unset): Why the step is not a hit, e.g. `policy off`, `reads outputs of b,
            known once it has run`, `cache unavailable`.
        saved_ms (int | None | Unset): Compute time the hit saves (hits only).
        size (int | None | Unset): Bytes of the cached outputs (hits only).
    """

    scope: CacheScopeView
    status: StepCacheStatus
    step: str
    entry: None | OwnEntry | Unset = UNSET
    reason: None | str | Unset = UNSET
    saved_ms: int | None | Unset = UNSET
    size: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.own_entry import OwnEntry  # noqa: PLC0415

        scope: str = self.scope

        status: str = self.status

        step = self.step

        entry: dict[str, Any] | None | Unset
        if isinstance(self.entry, Unset):
            entry = UNSET
        elif isinstance(self.entry, OwnEntry):
            entry = self.entry.to_dict()
        else:
            entry = self.entry

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

        size: int | None | Unset
        if isinstance(self.size, Unset):
            size = UNSET
        else:
            size = self.size

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "scope": scope,
                "status": status,
                "step": step,
            }
        )
        if entry is not UNSET:
            field_dict["entry"] = entry
        if reason is not UNSET:
            field_dict["reason"] = reason
        if saved_ms is not UNSET:
            field_dict["saved_ms"] = saved_ms
        if size is not UNSET:
            field_dict["size"] = size

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.own_entry import OwnEntry  # noqa: PLC0415

        d = dict(src_dict)
        scope = check_cache_scope_view(d.pop("scope"))

        status = check_step_cache_status(d.pop("status"))

        step = d.pop("step")

        def _parse_entry(data: object) -> None | OwnEntry | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                entry_type_0 = OwnEntry.from_dict(data)

                return entry_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OwnEntry | Unset, data)

        entry = _parse_entry(d.pop("entry", UNSET))

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

        def _parse_size(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        size = _parse_size(d.pop("size", UNSET))

        explained_step = cls(
            scope=scope,
            status=status,
            step=step,
            entry=entry,
            reason=reason,
            saved_ms=saved_ms,
            size=size,
        )

        explained_step.additional_properties = d
        return explained_step

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
