from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.role import check_role
from ..models.role import Role
from typing import cast
import datetime


T = TypeVar("T", bound="CreateApiKey")


@_attrs_define
class CreateApiKey:
    """
    Attributes:
        name (str):
        roles (list[Role]): Any of viewer, editor, admin.
        expires_at (datetime.datetime | None | Unset): When the key stops working (in the future); never when absent.
    """

    name: str
    roles: list[Role]
    expires_at: datetime.datetime | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        roles = []
        for roles_item_data in self.roles:
            roles_item: str = roles_item_data
            roles.append(roles_item)

        expires_at: None | str | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        elif isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "roles": roles,
            }
        )
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        roles = []
        _roles = d.pop("roles")
        for roles_item_data in _roles:
            roles_item = check_role(roles_item_data)

            roles.append(roles_item)

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

        create_api_key = cls(
            name=name,
            roles=roles,
            expires_at=expires_at,
        )

        return create_api_key
