from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field


T = TypeVar("T", bound="ExplainTotals")


@_attrs_define
class ExplainTotals:
    """
    Attributes:
        bytes_ (int): Bytes of the hits' cached outputs.
        hits (int):
        misses (int):
        not_cacheable (int):
        not_needed (int):
        pending (int):
        saved_ms (int): Compute time the hits and the steps not needed save.
        steps (int):
    """

    bytes_: int
    hits: int
    misses: int
    not_cacheable: int
    not_needed: int
    pending: int
    saved_ms: int
    steps: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        bytes_ = self.bytes_

        hits = self.hits

        misses = self.misses

        not_cacheable = self.not_cacheable

        not_needed = self.not_needed

        pending = self.pending

        saved_ms = self.saved_ms

        steps = self.steps

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "bytes": bytes_,
                "hits": hits,
                "misses": misses,
                "not_cacheable": not_cacheable,
                "not_needed": not_needed,
                "pending": pending,
                "saved_ms": saved_ms,
                "steps": steps,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        bytes_ = d.pop("bytes")

        hits = d.pop("hits")

        misses = d.pop("misses")

        not_cacheable = d.pop("not_cacheable")

        not_needed = d.pop("not_needed")

        pending = d.pop("pending")

        saved_ms = d.pop("saved_ms")

        steps = d.pop("steps")

        explain_totals = cls(
            bytes_=bytes_,
            hits=hits,
            misses=misses,
            not_cacheable=not_cacheable,
            not_needed=not_needed,
            pending=pending,
            saved_ms=saved_ms,
            steps=steps,
        )

        explain_totals.additional_properties = d
        return explain_totals

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
