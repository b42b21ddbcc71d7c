from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset


if TYPE_CHECKING:
    from ..models.webhook_filter_headers import WebhookFilterHeaders
    from ..models.webhook_filter_payload import WebhookFilterPayload


T = TypeVar("T", bound="WebhookFilter")


@_attrs_define
class WebhookFilter:
    """What a delivery must match to start a run: every condition.

    Attributes:
        headers (WebhookFilterHeaders | Unset): Header name (any case) → the value it must have, exactly (e.g.
            `X-GitHub-Event: push`).
        payload (WebhookFilterPayload | Unset): JSON pointer → the JSON value the payload must hold there (e.g.
            `/ref: "refs/heads/main"`).
    """

    headers: WebhookFilterHeaders | Unset = UNSET
    payload: WebhookFilterPayload | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        payload: dict[str, Any] | Unset = UNSET
        if not isinstance(self.payload, Unset):
            payload = self.payload.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if headers is not UNSET:
            field_dict["headers"] = headers
        if payload is not UNSET:
            field_dict["payload"] = payload

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.webhook_filter_headers import WebhookFilterHeaders  # noqa: PLC0415
        from ..models.webhook_filter_payload import WebhookFilterPayload  # noqa: PLC0415

        d = dict(src_dict)
        _headers = d.pop("headers", UNSET)
        headers: WebhookFilterHeaders | Unset
        if isinstance(_headers, Unset):
            headers = UNSET
        else:
            headers = WebhookFilterHeaders.from_dict(_headers)

        _payload = d.pop("payload", UNSET)
        payload: WebhookFilterPayload | Unset
        if isinstance(_payload, Unset):
            payload = UNSET
        else:
            payload = WebhookFilterPayload.from_dict(_payload)

        webhook_filter = cls(
            headers=headers,
            payload=payload,
        )

        return webhook_filter
