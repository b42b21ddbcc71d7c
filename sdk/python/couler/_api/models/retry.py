from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.retry_on_type_0 import check_retry_on_type_0
from ..models.retry_on_type_0 import RetryOnType0
from ..models.retry_on_type_1 import check_retry_on_type_1
from ..models.retry_on_type_1 import RetryOnType1
from typing import cast

if TYPE_CHECKING:
    from ..models.backoff import Backoff


T = TypeVar("T", bound="Retry")


@_attrs_define
class Retry:
    """
    Attributes:
        limit (int): Retries after the first attempt.
        backoff (Backoff | None | Unset):
        on (RetryOnType0 | RetryOnType1 | Unset):
    """

    limit: int
    backoff: Backoff | None | Unset = UNSET
    on: RetryOnType0 | RetryOnType1 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.backoff import Backoff  # noqa: PLC0415

        limit = self.limit

        backoff: dict[str, Any] | None | Unset
        if isinstance(self.backoff, Unset):
            backoff = UNSET
        elif isinstance(self.backoff, Backoff):
            backoff = self.backoff.to_dict()
        else:
            backoff = self.backoff

        on: str | Unset
        if isinstance(self.on, Unset):
            on = UNSET
        elif isinstance(self.on, str):
            on = self.on
        else:
            on = self.on

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "limit": limit,
            }
        )
        if backoff is not UNSET:
            field_dict["backoff"] = backoff
        if on is not UNSET:
            field_dict["on"] = on

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.backoff import Backoff  # noqa: PLC0415

        d = dict(src_dict)
        limit = d.pop("limit")

        def _parse_backoff(data: object) -> Backoff | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                backoff_type_0 = Backoff.from_dict(data)

                return backoff_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Backoff | None | Unset, data)

        backoff = _parse_backoff(d.pop("backoff", UNSET))

        def _parse_on(data: object) -> RetryOnType0 | RetryOnType1 | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                componentsschemas_retry_on_type_0 = check_retry_on_type_0(data)

                return componentsschemas_retry_on_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, str):
                raise TypeError()
            componentsschemas_retry_on_type_1 = check_retry_on_type_1(data)

            return componentsschemas_retry_on_type_1

        on = _parse_on(d.pop("on", UNSET))

        retry = cls(
            limit=limit,
            backoff=backoff,
            on=on,
        )

        return retry
