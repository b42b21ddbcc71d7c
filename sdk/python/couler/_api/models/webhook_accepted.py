from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="WebhookAccepted")


@_attrs_define
class WebhookAccepted:
    """What became of a delivery the ingress accepted.

    Attributes:
        delivery_id (str):
        duplicate (bool): A delivery id seen before: `run_id` is the run it started then.
        ignored (bool): The trigger's filter did not match: no run.
        run_id (None | str | Unset):
    """

    delivery_id: str
    duplicate: bool
    ignored: bool
    run_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        delivery_id = self.delivery_id

        duplicate = self.duplicate

        ignored = self.ignored

        run_id: None | str | Unset
        if isinstance(self.run_id, Unset):
            run_id = UNSET
        else:
            run_id = self.run_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "delivery_id": delivery_id,
                "duplicate": duplicate,
                "ignored": ignored,
            }
        )
        if run_id is not UNSET:
            field_dict["run_id"] = run_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        delivery_id = d.pop("delivery_id")

        duplicate = d.pop("duplicate")

        ignored = d.pop("ignored")

        def _parse_run_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        run_id = _parse_run_id(d.pop("run_id", UNSET))

        webhook_accepted = cls(
            delivery_id=delivery_id,
            duplicate=duplicate,
            ignored=ignored,
            run_id=run_id,
        )

        webhook_accepted.additional_properties = d
        return webhook_accepted

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
