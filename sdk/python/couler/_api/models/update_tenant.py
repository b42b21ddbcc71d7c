from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.step_network_setting import check_step_network_setting
from ..models.step_network_setting import StepNetworkSetting
from typing import cast

if TYPE_CHECKING:
    from ..models.split_budget_view import SplitBudgetView


T = TypeVar("T", bound="UpdateTenant")


@_attrs_define
class UpdateTenant:
    """
    Attributes:
        allowed_images (list[str] | None | Unset): Replaces the image patterns the tenant's generated steps may use,
            on top of the platform's (`[]` lifts the tenant's limit). At most
            100 patterns of 1-255 characters, without whitespace.
        cache_ttl_secs (int | None | Unset): Default TTL (seconds) of the tenant's cache entries.
        display_name (None | str | Unset):
        engine (None | str | Unset):
        min_schedule_interval_secs (int | None | Unset): The shortest gap, in seconds, between two ticks of one of the
            tenant's schedules, 1 to 86400. Platform admins only. Schedules
            created before a change keep ticking; they are held to it when
            next edited.
        share_cache (bool | None | Unset):
        split_budget (None | SplitBudgetView | Unset):
        step_network (None | StepNetworkSetting | Unset):
    """

    allowed_images: list[str] | None | Unset = UNSET
    cache_ttl_secs: int | None | Unset = UNSET
    display_name: None | str | Unset = UNSET
    engine: None | str | Unset = UNSET
    min_schedule_interval_secs: int | None | Unset = UNSET
    share_cache: bool | None | Unset = UNSET
    split_budget: None | SplitBudgetView | Unset = UNSET
    step_network: None | StepNetworkSetting | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.split_budget_view import SplitBudgetView  # noqa: PLC0415

        allowed_images: list[str] | None | Unset
        if isinstance(self.allowed_images, Unset):
            allowed_images = UNSET
        elif isinstance(self.allowed_images, list):
            allowed_images = self.allowed_images

        else:
            allowed_images = self.allowed_images

        cache_ttl_secs: int | None | Unset
        if isinstance(self.cache_ttl_secs, Unset):
            cache_ttl_secs = UNSET
        else:
            cache_ttl_secs = self.cache_ttl_secs

        display_name: None | str | Unset
        if isinstance(self.display_name, Unset):
            display_name = UNSET
        else:
            display_name = self.display_name

        engine: None | str | Unset
        if isinstance(self.engine, Unset):
            engine = UNSET
        else:
            engine = self.engine

        min_schedule_interval_secs: int | None | Unset
        if isinstance(self.min_schedule_interval_secs, Unset):
            min_schedule_interval_secs = UNSET
        else:
            min_schedule_interval_secs = self.min_schedule_interval_secs

        share_cache: bool | None | Unset
        if isinstance(self.share_cache, Unset):
            share_cache = UNSET
        else:
            share_cache = self.share_cache

        split_budget: dict[str, Any] | None | Unset
        if isinstance(self.split_budget, Unset):
            split_budget = UNSET
        elif isinstance(self.split_budget, SplitBudgetView):
            split_budget = self.split_budget.to_dict()
        else:
            split_budget = self.split_budget

        step_network: None | str | Unset
        if isinstance(self.step_network, Unset):
            step_network = UNSET
        elif isinstance(self.step_network, str):
            step_network = self.step_network
        else:
            step_network = self.step_network

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if allowed_images is not UNSET:
            field_dict["allowed_images"] = allowed_images
        if cache_ttl_secs is not UNSET:
            field_dict["cache_ttl_secs"] = cache_ttl_secs
        if display_name is not UNSET:
            field_dict["display_name"] = display_name
        if engine is not UNSET:
            field_dict["engine"] = engine
        if min_schedule_interval_secs is not UNSET:
            field_dict["min_schedule_interval_secs"] = min_schedule_interval_secs
        if share_cache is not UNSET:
            field_dict["share_cache"] = share_cache
        if split_budget is not UNSET:
            field_dict["split_budget"] = split_budget
        if step_network is not UNSET:
            field_dict["step_network"] = step_network

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.split_budget_view import SplitBudgetView  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_allowed_images(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                allowed_images_type_0 = cast(list[str], data)

                return allowed_images_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        allowed_images = _parse_allowed_images(d.pop("allowed_images", UNSET))

        def _parse_cache_ttl_secs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        cache_ttl_secs = _parse_cache_ttl_secs(d.pop("cache_ttl_secs", UNSET))

        def _parse_display_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        display_name = _parse_display_name(d.pop("display_name", UNSET))

        def _parse_engine(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        engine = _parse_engine(d.pop("engine", UNSET))

        def _parse_min_schedule_interval_secs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        min_schedule_interval_secs = _parse_min_schedule_interval_secs(
            d.pop("min_schedule_interval_secs", UNSET)
        )

        def _parse_share_cache(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        share_cache = _parse_share_cache(d.pop("share_cache", UNSET))

        def _parse_split_budget(data: object) -> None | SplitBudgetView | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                split_budget_type_0 = SplitBudgetView.from_dict(data)

                return split_budget_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SplitBudgetView | Unset, data)

        split_budget = _parse_split_budget(d.pop("split_budget", UNSET))

        def _parse_step_network(data: object) -> None | StepNetworkSetting | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                step_network_type_0 = check_step_network_setting(data)

                return step_network_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StepNetworkSetting | Unset, data)

        step_network = _parse_step_network(d.pop("step_network", UNSET))

        update_tenant = cls(
            allowed_images=allowed_images,
            cache_ttl_secs=cache_ttl_secs,
            display_name=display_name,
            engine=engine,
            min_schedule_interval_secs=min_schedule_interval_secs,
            share_cache=share_cache,
            split_budget=split_budget,
            step_network=step_network,
        )

        return update_tenant
