from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.webhook_auth import check_webhook_auth
from ..models.webhook_auth import WebhookAuth
from typing import cast
import datetime

if TYPE_CHECKING:
    from ..models.webhook_filter import WebhookFilter
    from ..models.webhook_view_parameter_map import WebhookViewParameterMap
    from ..models.webhook_view_parameters import WebhookViewParameters


T = TypeVar("T", bound="WebhookCreated")


@_attrs_define
class WebhookCreated:
    """A trigger with its new credential, shown only in this answer.

    Attributes:
        auth (WebhookAuth): How a delivery proves it comes from the sender.
        created_at (datetime.datetime):
        created_by (str):
        credential_version (int): 1, plus one per rotation.
        enabled (bool):
        filter_ (WebhookFilter): What a delivery must match to start a run: every condition.
        id (str): A trigger id.
        max_body_bytes (int):
        name (str):
        parameter_map (WebhookViewParameterMap):
        parameters (WebhookViewParameters):
        public_id (str): The id senders post to, `whk_…`; a rotation may change it.
        rate_per_second (int):
        replay_window_secs (int):
        updated_at (datetime.datetime):
        url (str): Where senders post, relative to the API's base URL.
        workflow (str): A workflow id.
        secret (str): The HMAC secret (`hmac_github`: any text GitHub takes;
            `standard_webhooks`: `whsec_…`) or the bearer token. Shown only
            now: nothing it could be read back from is stored.
        previous_public_id (None | str | Unset): The public id the last rotation replaced, while it still works.
        previous_valid_until (datetime.datetime | None | Unset): While the credential (and public id) the last rotation
            replaced
            still work: until when.
        rotated_at (datetime.datetime | None | Unset):
        version (int | None | Unset):
    """

    auth: WebhookAuth
    created_at: datetime.datetime
    created_by: str
    credential_version: int
    enabled: bool
    filter_: WebhookFilter
    id: str
    max_body_bytes: int
    name: str
    parameter_map: WebhookViewParameterMap
    parameters: WebhookViewParameters
    public_id: str
    rate_per_second: int
    replay_window_secs: int
    updated_at: datetime.datetime
    url: str
    workflow: str
    secret: str
    previous_public_id: None | str | Unset = UNSET
    previous_valid_until: datetime.datetime | None | Unset = UNSET
    rotated_at: datetime.datetime | None | Unset = UNSET
    version: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        auth: str = self.auth

        created_at = self.created_at.isoformat()

        created_by = self.created_by

        credential_version = self.credential_version

        enabled = self.enabled

        filter_ = self.filter_.to_dict()

        id = self.id

        max_body_bytes = self.max_body_bytes

        name = self.name

        parameter_map = self.parameter_map.to_dict()

        parameters = self.parameters.to_dict()

        public_id = self.public_id

        rate_per_second = self.rate_per_second

        replay_window_secs = self.replay_window_secs

        updated_at = self.updated_at.isoformat()

        url = self.url

        workflow = self.workflow

        secret = self.secret

        previous_public_id: None | str | Unset
        if isinstance(self.previous_public_id, Unset):
            previous_public_id = UNSET
        else:
            previous_public_id = self.previous_public_id

        previous_valid_until: None | str | Unset
        if isinstance(self.previous_valid_until, Unset):
            previous_valid_until = UNSET
        elif isinstance(self.previous_valid_until, datetime.datetime):
            previous_valid_until = self.previous_valid_until.isoformat()
        else:
            previous_valid_until = self.previous_valid_until

        rotated_at: None | str | Unset
        if isinstance(self.rotated_at, Unset):
            rotated_at = UNSET
        elif isinstance(self.rotated_at, datetime.datetime):
            rotated_at = self.rotated_at.isoformat()
        else:
            rotated_at = self.rotated_at

        version: int | None | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "auth": auth,
                "created_at": created_at,
                "created_by": created_by,
                "credential_version": credential_version,
                "enabled": enabled,
                "filter": filter_,
                "id": id,
                "max_body_bytes": max_body_bytes,
                "name": name,
                "parameter_map": parameter_map,
                "parameters": parameters,
                "public_id": public_id,
                "rate_per_second": rate_per_second,
                "replay_window_secs": replay_window_secs,
                "updated_at": updated_at,
                "url": url,
                "workflow": workflow,
                "secret": secret,
            }
        )
        if previous_public_id is not UNSET:
            field_dict["previous_public_id"] = previous_public_id
        if previous_valid_until is not UNSET:
            field_dict["previous_valid_until"] = previous_valid_until
        if rotated_at is not UNSET:
            field_dict["rotated_at"] = rotated_at
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.webhook_filter import WebhookFilter  # noqa: PLC0415
        from ..models.webhook_view_parameter_map import WebhookViewParameterMap  # noqa: PLC0415
        from ..models.webhook_view_parameters import WebhookViewParameters  # noqa: PLC0415

        d = dict(src_dict)
        auth = check_webhook_auth(d.pop("auth"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        credential_version = d.pop("credential_version")

        enabled = d.pop("enabled")

        filter_ = WebhookFilter.from_dict(d.pop("filter"))

        id = d.pop("id")

        max_body_bytes = d.pop("max_body_bytes")

        name = d.pop("name")

        parameter_map = WebhookViewParameterMap.from_dict(d.pop("parameter_map"))

        parameters = WebhookViewParameters.from_dict(d.pop("parameters"))

        public_id = d.pop("public_id")

        rate_per_second = d.pop("rate_per_second")

        replay_window_secs = d.pop("replay_window_secs")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        url = d.pop("url")

        workflow = d.pop("workflow")

        secret = d.pop("secret")

        def _parse_previous_public_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        previous_public_id = _parse_previous_public_id(
            d.pop("previous_public_id", UNSET)
        )

        def _parse_previous_valid_until(
            data: object,
        ) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                previous_valid_until_type_0 = datetime.datetime.fromisoformat(data)

                return previous_valid_until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        previous_valid_until = _parse_previous_valid_until(
            d.pop("previous_valid_until", UNSET)
        )

        def _parse_rotated_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                rotated_at_type_0 = datetime.datetime.fromisoformat(data)

                return rotated_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        rotated_at = _parse_rotated_at(d.pop("rotated_at", UNSET))

        def _parse_version(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        webhook_created = cls(
            auth=auth,
            created_at=created_at,
            created_by=created_by,
            credential_version=credential_version,
            enabled=enabled,
            filter_=filter_,
            id=id,
            max_body_bytes=max_body_bytes,
            name=name,
            parameter_map=parameter_map,
            parameters=parameters,
            public_id=public_id,
            rate_per_second=rate_per_second,
            replay_window_secs=replay_window_secs,
            updated_at=updated_at,
            url=url,
            workflow=workflow,
            secret=secret,
            previous_public_id=previous_public_id,
            previous_valid_until=previous_valid_until,
            rotated_at=rotated_at,
            version=version,
        )

        webhook_created.additional_properties = d
        return webhook_created

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
