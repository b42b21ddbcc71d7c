from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="RotateWebhook")


@_attrs_define
class RotateWebhook:
    """A rotation of a trigger's credential.

    Attributes:
        grace_secs (int | None | Unset): How long the replaced credential (and public id) keep working, 0 to
            604800 seconds (default 86400: a day to update the sender).
        new_public_id (bool | Unset): Also give the trigger a new public id (its URL changes).
    """

    grace_secs: int | None | Unset = UNSET
    new_public_id: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        grace_secs: int | None | Unset
        if isinstance(self.grace_secs, Unset):
            grace_secs = UNSET
        else:
            grace_secs = self.grace_secs

        new_public_id = self.new_public_id

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if grace_secs is not UNSET:
            field_dict["grace_secs"] = grace_secs
        if new_public_id is not UNSET:
            field_dict["new_public_id"] = new_public_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_grace_secs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        grace_secs = _parse_grace_secs(d.pop("grace_secs", UNSET))

        new_public_id = d.pop("new_public_id", UNSET)

        rotate_webhook = cls(
            grace_secs=grace_secs,
            new_public_id=new_public_id,
        )

        return rotate_webhook
