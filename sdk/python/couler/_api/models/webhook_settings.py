from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.webhook_auth import check_webhook_auth
from ..models.webhook_auth import WebhookAuth
from typing import cast

if TYPE_CHECKING:
    from ..models.webhook_filter import WebhookFilter
    from ..models.webhook_settings_parameter_map_type_0 import (
        WebhookSettingsParameterMapType0,
    )
    from ..models.webhook_settings_parameters_type_0 import (
        WebhookSettingsParametersType0,
    )


T = TypeVar("T", bound="WebhookSettings")


@_attrs_define
class WebhookSettings:
    """A webhook trigger: a new one (`name` and `auth` required), or the
    changes to one (absent fields keep their value; maps are replaced
    whole).

        Attributes:
            auth (None | Unset | WebhookAuth):
            enabled (bool | None | Unset): A disabled trigger answers 404, as if it did not exist.
            filter_ (None | Unset | WebhookFilter):
            max_body_bytes (int | None | Unset): Largest delivery body it takes (default and most: the platform's
                limit, 1 MiB unless configured); over it 413.
            name (None | str | Unset): Its name within the workflow (only when creating): 1 to 63
                lowercase letters, digits or '-'.
            parameter_map (None | Unset | WebhookSettingsParameterMapType0): Workflow parameter → JSON pointer (RFC 6901) of
                the payload value it
                takes (a string, number or boolean; a delivery without it is 422).
            parameters (None | Unset | WebhookSettingsParametersType0): Parameter values the same for every delivery (not
                also mapped).
            rate_per_second (int | None | Unset): Deliveries per second it takes, 1 to 1000 (default 10); over it 429.
            replay_window_secs (int | None | Unset): Standard Webhooks: how far a delivery's `webhook-timestamp` may be
                from now, 1 to 3600 seconds (default 300).
            version (int | None | Unset): The workflow version its runs execute; null or absent: the latest
                at each delivery.
    """

    auth: None | Unset | WebhookAuth = UNSET
    enabled: bool | None | Unset = UNSET
    filter_: None | Unset | WebhookFilter = UNSET
    max_body_bytes: int | None | Unset = UNSET
    name: None | str | Unset = UNSET
    parameter_map: None | Unset | WebhookSettingsParameterMapType0 = UNSET
    parameters: None | Unset | WebhookSettingsParametersType0 = UNSET
    rate_per_second: int | None | Unset = UNSET
    replay_window_secs: int | None | Unset = UNSET
    version: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.webhook_filter import WebhookFilter  # noqa: PLC0415
        from ..models.webhook_settings_parameter_map_type_0 import (
            WebhookSettingsParameterMapType0,
        )  # noqa: PLC0415
        from ..models.webhook_settings_parameters_type_0 import (
            WebhookSettingsParametersType0,
        )  # noqa: PLC0415

        auth: None | str | Unset
        if isinstance(self.auth, Unset):
            auth = UNSET
        elif isinstance(self.auth, str):
            auth = self.auth
        else:
            auth = self.auth

        enabled: bool | None | Unset
        if isinstance(self.enabled, Unset):
            enabled = UNSET
        else:
            enabled = self.enabled

        filter_: dict[str, Any] | None | Unset
        if isinstance(self.filter_, Unset):
            filter_ = UNSET
        elif isinstance(self.filter_, WebhookFilter):
            filter_ = self.filter_.to_dict()
        else:
            filter_ = self.filter_

        max_body_bytes: int | None | Unset
        if isinstance(self.max_body_bytes, Unset):
            max_body_bytes = UNSET
        else:
            max_body_bytes = self.max_body_bytes

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        parameter_map: dict[str, Any] | None | Unset
        if isinstance(self.parameter_map, Unset):
            parameter_map = UNSET
        elif isinstance(self.parameter_map, WebhookSettingsParameterMapType0):
            parameter_map = self.parameter_map.to_dict()
        else:
            parameter_map = self.parameter_map

        parameters: dict[str, Any] | None | Unset
        if isinstance(self.parameters, Unset):
            parameters = UNSET
        elif isinstance(self.parameters, WebhookSettingsParametersType0):
            parameters = self.parameters.to_dict()
        else:
            parameters = self.parameters

        rate_per_second: int | None | Unset
        if isinstance(self.rate_per_second, Unset):
            rate_per_second = UNSET
        else:
            rate_per_second = self.rate_per_second

        replay_window_secs: int | None | Unset
        if isinstance(self.replay_window_secs, Unset):
            replay_window_secs = UNSET
        else:
            replay_window_secs = self.replay_window_secs

        version: int | None | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if auth is not UNSET:
            field_dict["auth"] = auth
        if enabled is not UNSET:
            field_dict["enabled"] = enabled
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if max_body_bytes is not UNSET:
            field_dict["max_body_bytes"] = max_body_bytes
        if name is not UNSET:
            field_dict["name"] = name
        if parameter_map is not UNSET:
            field_dict["parameter_map"] = parameter_map
        if parameters is not UNSET:
            field_dict["parameters"] = parameters
        if rate_per_second is not UNSET:
            field_dict["rate_per_second"] = rate_per_second
        if replay_window_secs is not UNSET:
            field_dict["replay_window_secs"] = replay_window_secs
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.webhook_filter import WebhookFilter  # noqa: PLC0415
        from ..models.webhook_settings_parameter_map_type_0 import (
            WebhookSettingsParameterMapType0,
        )  # noqa: PLC0415
        from ..models.webhook_settings_parameters_type_0 import (
            WebhookSettingsParametersType0,
        )  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_auth(data: object) -> None | Unset | WebhookAuth:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                auth_type_0 = check_webhook_auth(data)

                return auth_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WebhookAuth, data)

        auth = _parse_auth(d.pop("auth", UNSET))

        def _parse_enabled(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        enabled = _parse_enabled(d.pop("enabled", UNSET))

        def _parse_filter_(data: object) -> None | Unset | WebhookFilter:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                filter_type_0 = WebhookFilter.from_dict(data)

                return filter_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WebhookFilter, data)

        filter_ = _parse_filter_(d.pop("filter", UNSET))

        def _parse_max_body_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_body_bytes = _parse_max_body_bytes(d.pop("max_body_bytes", UNSET))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_parameter_map(
            data: object,
        ) -> None | Unset | WebhookSettingsParameterMapType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                parameter_map_type_0 = WebhookSettingsParameterMapType0.from_dict(data)

                return parameter_map_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WebhookSettingsParameterMapType0, data)

        parameter_map = _parse_parameter_map(d.pop("parameter_map", UNSET))

        def _parse_parameters(
            data: object,
        ) -> None | Unset | WebhookSettingsParametersType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                parameters_type_0 = WebhookSettingsParametersType0.from_dict(data)

                return parameters_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WebhookSettingsParametersType0, data)

        parameters = _parse_parameters(d.pop("parameters", UNSET))

        def _parse_rate_per_second(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        rate_per_second = _parse_rate_per_second(d.pop("rate_per_second", UNSET))

        def _parse_replay_window_secs(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        replay_window_secs = _parse_replay_window_secs(
            d.pop("replay_window_secs", UNSET)
        )

        def _parse_version(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        webhook_settings = cls(
            auth=auth,
            enabled=enabled,
            filter_=filter_,
            max_body_bytes=max_body_bytes,
            name=name,
            parameter_map=parameter_map,
            parameters=parameters,
            rate_per_second=rate_per_second,
            replay_window_secs=replay_window_secs,
            version=version,
        )

        return webhook_settings
