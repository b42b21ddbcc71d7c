from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define


T = TypeVar("T", bound="QuotasView")


@_attrs_define
class QuotasView:
    """
    Attributes:
        max_concurrent_runs (int): Runs planning or running at once.
        max_queued_runs (int): Runs waiting in the queue.
        requests_per_second (int): API requests per second (shared by all replicas).
    """

    max_concurrent_runs: int
    max_queued_runs: int
    requests_per_second: int

    def to_dict(self) -> dict[str, Any]:
        max_concurrent_runs = self.max_concurrent_runs

        max_queued_runs = self.max_queued_runs

        requests_per_second = self.requests_per_second

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "max_concurrent_runs": max_concurrent_runs,
                "max_queued_runs": max_queued_runs,
                "requests_per_second": requests_per_second,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_concurrent_runs = d.pop("max_concurrent_runs")

        max_queued_runs = d.pop("max_queued_runs")

        requests_per_second = d.pop("requests_per_second")

        quotas_view = cls(
            max_concurrent_runs=max_concurrent_runs,
            max_queued_runs=max_queued_runs,
            requests_per_second=requests_per_second,
        )

        return quotas_view
