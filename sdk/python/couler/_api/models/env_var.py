from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.secret_ref import SecretRef


T = TypeVar("T", bound="EnvVar")


@_attrs_define
class EnvVar:
    """An environment variable: a literal `value`, or a `secret` referenced by
    name (never a secret's value).

        Attributes:
            name (str):
            secret (None | SecretRef | Unset):
            value (None | str | Unset):
    """

    name: str
    secret: None | SecretRef | Unset = UNSET
    value: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.secret_ref import SecretRef  # noqa: PLC0415

        name = self.name

        secret: dict[str, Any] | None | Unset
        if isinstance(self.secret, Unset):
            secret = UNSET
        elif isinstance(self.secret, SecretRef):
            secret = self.secret.to_dict()
        else:
            secret = self.secret

        value: None | str | Unset
        if isinstance(self.value, Unset):
            value = UNSET
        else:
            value = self.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if secret is not UNSET:
            field_dict["secret"] = secret
        if value is not UNSET:
            field_dict["value"] = value

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.secret_ref import SecretRef  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        def _parse_secret(data: object) -> None | SecretRef | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                secret_type_0 = SecretRef.from_dict(data)

                return secret_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SecretRef | Unset, data)

        secret = _parse_secret(d.pop("secret", UNSET))

        def _parse_value(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        value = _parse_value(d.pop("value", UNSET))

        env_var = cls(
            name=name,
            secret=secret,
            value=value,
        )

        return env_var
