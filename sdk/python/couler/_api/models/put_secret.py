from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define


if TYPE_CHECKING:
    from ..models.put_secret_data import PutSecretData


T = TypeVar("T", bound="PutSecret")


@_attrs_define
class PutSecret:
    """A secret's value: its keys and their values.

    Attributes:
        data (PutSecretData): Key → value. 1 to 64 keys; keys and values together at most 65536 bytes (UTF-8). Values
            are write-only.
    """

    data: PutSecretData

    def to_dict(self) -> dict[str, Any]:
        data = self.data.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "data": data,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.put_secret_data import PutSecretData  # noqa: PLC0415

        d = dict(src_dict)
        data = PutSecretData.from_dict(d.pop("data"))

        put_secret = cls(
            data=data,
        )

        return put_secret
