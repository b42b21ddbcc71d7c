from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field


T = TypeVar("T", bound="BackfillCounts")


@_attrs_define
class BackfillCounts:
    """How far a backfill got.

    Attributes:
        active (int):
        failed (int):
        items (int):
        pending (int):
        succeeded (int):
    """

    active: int
    failed: int
    items: int
    pending: int
    succeeded: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        active = self.active

        failed = self.failed

        items = self.items

        pending = self.pending

        succeeded = self.succeeded

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "active": active,
                "failed": failed,
                "items": items,
                "pending": pending,
                "succeeded": succeeded,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        active = d.pop("active")

        failed = d.pop("failed")

        items = d.pop("items")

        pending = d.pop("pending")

        succeeded = d.pop("succeeded")

        backfill_counts = cls(
            active=active,
            failed=failed,
            items=items,
            pending=pending,
            succeeded=succeeded,
        )

        backfill_counts.additional_properties = d
        return backfill_counts

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
