from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field


from ..models.secret_action import check_secret_action
from ..models.secret_action import SecretAction
from typing import cast
import datetime


T = TypeVar("T", bound="SecretAuditView")


@_attrs_define
class SecretAuditView:
    """One write or delete of a secret (never its value).

    Attributes:
        action (SecretAction):
        actor (str): Who did it.
        at (datetime.datetime):
        id (int):
        keys (list[str]): The secret's key names at that version.
        name (str):
        version (int):
    """

    action: SecretAction
    actor: str
    at: datetime.datetime
    id: int
    keys: list[str]
    name: str
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        action: str = self.action

        actor = self.actor

        at = self.at.isoformat()

        id = self.id

        keys = self.keys

        name = self.name

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
                "actor": actor,
                "at": at,
                "id": id,
                "keys": keys,
                "name": name,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        action = check_secret_action(d.pop("action"))

        actor = d.pop("actor")

        at = datetime.datetime.fromisoformat(d.pop("at"))

        id = d.pop("id")

        keys = cast(list[str], d.pop("keys"))

        name = d.pop("name")

        version = d.pop("version")

        secret_audit_view = cls(
            action=action,
            actor=actor,
            at=at,
            id=id,
            keys=keys,
            name=name,
            version=version,
        )

        secret_audit_view.additional_properties = d
        return secret_audit_view

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
