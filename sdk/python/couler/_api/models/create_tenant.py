from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.quotas_view import QuotasView


T = TypeVar("T", bound="CreateTenant")


@_attrs_define
class CreateTenant:
    """
    Attributes:
        name (str): Lowercase letters, digits and `-` (DNS-1123 label).
        display_name (None | str | Unset):
        engine (None | str | Unset): One of local, argo, tekton, airflow, kfp (default local).
        quotas (None | QuotasView | Unset):
        share_cache (bool | None | Unset):
    """

    name: str
    display_name: None | str | Unset = UNSET
    engine: None | str | Unset = UNSET
    quotas: None | QuotasView | Unset = UNSET
    share_cache: bool | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.quotas_view import QuotasView  # noqa: PLC0415

        name = self.name

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

        quotas: dict[str, Any] | None | Unset
        if isinstance(self.quotas, Unset):
            quotas = UNSET
        elif isinstance(self.quotas, QuotasView):
            quotas = self.quotas.to_dict()
        else:
            quotas = self.quotas

        share_cache: bool | None | Unset
        if isinstance(self.share_cache, Unset):
            share_cache = UNSET
        else:
            share_cache = self.share_cache

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if display_name is not UNSET:
            field_dict["display_name"] = display_name
        if engine is not UNSET:
            field_dict["engine"] = engine
        if quotas is not UNSET:
            field_dict["quotas"] = quotas
        if share_cache is not UNSET:
            field_dict["share_cache"] = share_cache

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.quotas_view import QuotasView  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

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

        def _parse_quotas(data: object) -> None | QuotasView | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                quotas_type_0 = QuotasView.from_dict(data)

                return quotas_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | QuotasView | Unset, data)

        quotas = _parse_quotas(d.pop("quotas", UNSET))

        def _parse_share_cache(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        share_cache = _parse_share_cache(d.pop("share_cache", UNSET))

        create_tenant = cls(
            name=name,
            display_name=display_name,
            engine=engine,
            quotas=quotas,
            share_cache=share_cache,
        )

        return create_tenant
