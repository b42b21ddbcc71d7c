from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.step_network import check_step_network
from ..models.step_network import StepNetwork
from typing import cast
import datetime

if TYPE_CHECKING:
    from ..models.quotas_view import QuotasView
    from ..models.split_budget_view import SplitBudgetView


T = TypeVar("T", bound="TenantView")


@_attrs_define
class TenantView:
    """
    Attributes:
        allowed_images (list[str]): Image patterns this tenant's generated steps may use, on top of the
            platform's `[generate] allowed_images`: an image must match both.
            `*` matches any run of characters; a pattern without `*` is a
            prefix. Empty: no limit beyond the platform's.
        created_at (datetime.datetime):
        display_name (str):
        engine (str): The engine this tenant's runs go to.
        id (str): A tenant id.
        min_schedule_interval_secs (int): The shortest gap, in seconds, between two ticks of one of the
            tenant's schedules (set by platform admins).
        name (str):
        quotas (QuotasView):
        share_cache (bool): Whether the tenant's steps share cache entries with other tenants.
        split_budget (SplitBudgetView): Limits of one sub-workflow. An absent field keeps the engine's default
            (200 steps and 512 KiB of manifest for Kubernetes-based engines; none
            for the local engine).
        updated_at (datetime.datetime):
        cache_ttl_secs (int | None | Unset): Default TTL (seconds) of the cache entries the tenant's steps produce.
        step_network (None | StepNetwork | Unset):
    """

    allowed_images: list[str]
    created_at: datetime.datetime
    display_name: str
    engine: str
    id: str
    min_schedule_interval_secs: int
    name: str
    quotas: QuotasView
    share_cache: bool
    split_budget: SplitBudgetView
    updated_at: datetime.datetime
    cache_ttl_secs: int | None | Unset = UNSET
    step_network: None | StepNetwork | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        allowed_images = self.allowed_images

        created_at = self.created_at.isoformat()

        display_name = self.display_name

        engine = self.engine

        id = self.id

        min_schedule_interval_secs = self.min_schedule_interval_secs

        name = self.name

        quotas = self.quotas.to_dict()

        share_cache = self.share_cache

        split_budget = self.split_budget.to_dict()

        updated_at = self.updated_at.isoformat()

        cache_ttl_secs: int | None | Unset
        if isinstance(self.cache_ttl_secs, Unset):
            cache_ttl_secs = UNSET
        else:
            cache_ttl_secs = self.cache_ttl_secs

        step_network: None | str | Unset
        if isinstance(self.step_network, Unset):
            step_network = UNSET
        elif isinstance(self.step_network, str):
            step_network = self.step_network
        else:
            step_network = self.step_network

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "allowed_images": allowed_images,
                "created_at": created_at,
                "display_name": display_name,
                "engine": engine,
                "id": id,
                "min_schedule_interval_secs": min_schedule_interval_secs,
                "name": name,
                "quotas": quotas,
                "share_cache": share_cache,
                "split_budget": split_budget,
                "updated_at": updated_at,
            }
        )
        if cache_ttl_secs is not UNSET:
            field_dict["cache_ttl_secs"] = cache_ttl_secs
        if step_network is not UNSET:
            field_dict["step_network"] = step_network

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.quotas_view import QuotasView  # noqa: PLC0415
        from ..models.split_budget_view import SplitBudgetView  # noqa: PLC0415

        d = dict(src_dict)
        allowed_images = cast(list[str], d.pop("allowed_images"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        display_name = d.pop("display_name")

        engine = d.pop("engine")

        id = d.pop("id")

        min_schedule_interval_secs = d.pop("min_schedule_interval_secs")

        name = d.pop("name")

        quotas = QuotasView.from_dict(d.pop("quotas"))

        share_cache = d.pop("share_cache")

        split_budget = SplitBudgetView.from_dict(d.pop("split_budget"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_cache_ttl_secs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        cache_ttl_secs = _parse_cache_ttl_secs(d.pop("cache_ttl_secs", UNSET))

        def _parse_step_network(data: object) -> None | StepNetwork | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                step_network_type_0 = check_step_network(data)

                return step_network_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StepNetwork | Unset, data)

        step_network = _parse_step_network(d.pop("step_network", UNSET))

        tenant_view = cls(
            allowed_images=allowed_images,
            created_at=created_at,
            display_name=display_name,
            engine=engine,
            id=id,
            min_schedule_interval_secs=min_schedule_interval_secs,
            name=name,
            quotas=quotas,
            share_cache=share_cache,
            split_budget=split_budget,
            updated_at=updated_at,
            cache_ttl_secs=cache_ttl_secs,
            step_network=step_network,
        )

        tenant_view.additional_properties = d
        return tenant_view

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
