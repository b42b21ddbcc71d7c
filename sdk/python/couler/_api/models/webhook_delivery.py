from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.delivery_outcome import check_delivery_outcome
from ..models.delivery_outcome import DeliveryOutcome
from typing import cast
import datetime


T = TypeVar("T", bound="WebhookDelivery")


@_attrs_define
class WebhookDelivery:
    """One authenticated delivery of a trigger and what became of it.

    Attributes:
        attempts (int): How many times it was delivered.
        delivery_id (str): The sender's id of it (`X-GitHub-Delivery`, `webhook-id` or
            `Idempotency-Key`), or one the server made up when it gave none.
        last_received_at (datetime.datetime):
        outcome (DeliveryOutcome): What became of an authenticated delivery.
        received_at (datetime.datetime):
        detail (None | str | Unset): Why it was ignored or rejected: problem codes and pointers.
        run (None | str | Unset):
    """

    attempts: int
    delivery_id: str
    last_received_at: datetime.datetime
    outcome: DeliveryOutcome
    received_at: datetime.datetime
    detail: None | str | Unset = UNSET
    run: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        delivery_id = self.delivery_id

        last_received_at = self.last_received_at.isoformat()

        outcome: str = self.outcome

        received_at = self.received_at.isoformat()

        detail: None | str | Unset
        if isinstance(self.detail, Unset):
            detail = UNSET
        else:
            detail = self.detail

        run: None | str | Unset
        if isinstance(self.run, Unset):
            run = UNSET
        else:
            run = self.run

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "delivery_id": delivery_id,
                "last_received_at": last_received_at,
                "outcome": outcome,
                "received_at": received_at,
            }
        )
        if detail is not UNSET:
            field_dict["detail"] = detail
        if run is not UNSET:
            field_dict["run"] = run

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        delivery_id = d.pop("delivery_id")

        last_received_at = datetime.datetime.fromisoformat(d.pop("last_received_at"))

        outcome = check_delivery_outcome(d.pop("outcome"))

        received_at = datetime.datetime.fromisoformat(d.pop("received_at"))

        def _parse_detail(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        detail = _parse_detail(d.pop("detail", UNSET))

        def _parse_run(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        run = _parse_run(d.pop("run", UNSET))

        webhook_delivery = cls(
            attempts=attempts,
            delivery_id=delivery_id,
            last_received_at=last_received_at,
            outcome=outcome,
            received_at=received_at,
            detail=detail,
            run=run,
        )

        webhook_delivery.additional_properties = d
        return webhook_delivery

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
