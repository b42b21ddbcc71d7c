from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.credential import check_credential
from ..models.credential import Credential
from ..models.role import check_role
from ..models.role import Role
from typing import cast


T = TypeVar("T", bound="MeView")


@_attrs_define
class MeView:
    """The caller.

    Attributes:
        credential (Credential): How the caller authenticated.
        platform_admin (bool): Whether the caller administers the platform (tenants, quotas).
        subject (str): The token's subject, or the API key's name.
        role (None | Role | Unset):
        tenant (None | str | Unset):
    """

    credential: Credential
    platform_admin: bool
    subject: str
    role: None | Role | Unset = UNSET
    tenant: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        credential: str = self.credential

        platform_admin = self.platform_admin

        subject = self.subject

        role: None | str | Unset
        if isinstance(self.role, Unset):
            role = UNSET
        elif isinstance(self.role, str):
            role = self.role
        else:
            role = self.role

        tenant: None | str | Unset
        if isinstance(self.tenant, Unset):
            tenant = UNSET
        else:
            tenant = self.tenant

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "credential": credential,
                "platform_admin": platform_admin,
                "subject": subject,
            }
        )
        if role is not UNSET:
            field_dict["role"] = role
        if tenant is not UNSET:
            field_dict["tenant"] = tenant

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        credential = check_credential(d.pop("credential"))

        platform_admin = d.pop("platform_admin")

        subject = d.pop("subject")

        def _parse_role(data: object) -> None | Role | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                role_type_0 = check_role(data)

                return role_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Role | Unset, data)

        role = _parse_role(d.pop("role", UNSET))

        def _parse_tenant(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tenant = _parse_tenant(d.pop("tenant", UNSET))

        me_view = cls(
            credential=credential,
            platform_admin=platform_admin,
            subject=subject,
            role=role,
            tenant=tenant,
        )

        me_view.additional_properties = d
        return me_view

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
