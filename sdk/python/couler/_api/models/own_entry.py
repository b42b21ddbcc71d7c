from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime


T = TypeVar("T", bound="OwnEntry")


@_attrs_define
class OwnEntry:
    """An entry the tenant produced, as the index holds it.

    Attributes:
        created_at (datetime.datetime): When the step that produced it finished.
        hits (int): Runs that reused it since.
        expires_at (datetime.datetime | None | Unset): When it expires: the step's `cache.ttl`, else the tenant's
            default,
            at most the platform's maximum, from when it was computed.
        last_hit_at (datetime.datetime | None | Unset): The latest run that reused it.
    """

    created_at: datetime.datetime
    hits: int
    expires_at: datetime.datetime | None | Unset = UNSET
    last_hit_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        hits = self.hits

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        last_hit_at: None | str | Unset
        if isinstance(self.last_hit_at, Unset):
            last_hit_at = UNSET
        elif isinstance(self.last_hit_at, datetime.datetime):
            last_hit_at = self.last_hit_at.isoformat()
        else:
            last_hit_at = self.last_hit_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "hits": hits,
            }
        )
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if last_hit_at is not UNSET:
            field_dict["last_hit_at"] = last_hit_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        hits = d.pop("hits")

        def _parse_expires_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expires_at", UNSET))

        def _parse_last_hit_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_hit_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_hit_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        last_hit_at = _parse_last_hit_at(d.pop("last_hit_at", UNSET))

        own_entry = cls(
            created_at=created_at,
            hits=hits,
            expires_at=expires_at,
            last_hit_at=last_hit_at,
        )

        own_entry.additional_properties = d
        return own_entry

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
