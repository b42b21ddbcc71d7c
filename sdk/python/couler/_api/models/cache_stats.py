from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field


T = TypeVar("T", bound="CacheStats")


@_attrs_define
class CacheStats:
    """
    Attributes:
        bytes_saved (int): Output bytes the hits did not have to produce.
        compute_ms_saved (int): Compute time the hits saved.
        degraded (bool): The cache index was unavailable; the numbers are zero.
        entries_produced (int): Entries the tenant's runs produced that are still cached.
        hits (int): Steps of the tenant's runs served from the cache.
        misses (int): Cacheable steps of the tenant's runs that had to run (counted as
            each offers its result to the cache).
    """

    bytes_saved: int
    compute_ms_saved: int
    degraded: bool
    entries_produced: int
    hits: int
    misses: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        bytes_saved = self.bytes_saved

        compute_ms_saved = self.compute_ms_saved

        degraded = self.degraded

        entries_produced = self.entries_produced

        hits = self.hits

        misses = self.misses

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "bytes_saved": bytes_saved,
                "compute_ms_saved": compute_ms_saved,
                "degraded": degraded,
                "entries_produced": entries_produced,
                "hits": hits,
                "misses": misses,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        bytes_saved = d.pop("bytes_saved")

        compute_ms_saved = d.pop("compute_ms_saved")

        degraded = d.pop("degraded")

        entries_produced = d.pop("entries_produced")

        hits = d.pop("hits")

        misses = d.pop("misses")

        cache_stats = cls(
            bytes_saved=bytes_saved,
            compute_ms_saved=compute_ms_saved,
            degraded=degraded,
            entries_produced=entries_produced,
            hits=hits,
            misses=misses,
        )

        cache_stats.additional_properties = d
        return cache_stats

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
