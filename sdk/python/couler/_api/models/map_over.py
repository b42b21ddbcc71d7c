from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="MapOver")


@_attrs_define
class MapOver:
    """Fan-out: `items` given here, or `from` a JSON list produced earlier.

    Attributes:
        from_ (None | str | Unset): A reference to a parameter holding a JSON list.
        items (list[Any] | None | Unset):
        parallelism (int | None | Unset): At most this many instances at once.
    """

    from_: None | str | Unset = UNSET
    items: list[Any] | None | Unset = UNSET
    parallelism: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from_: None | str | Unset
        if isinstance(self.from_, Unset):
            from_ = UNSET
        else:
            from_ = self.from_

        items: list[Any] | None | Unset
        if isinstance(self.items, Unset):
            items = UNSET
        elif isinstance(self.items, list):
            items = self.items

        else:
            items = self.items

        parallelism: int | None | Unset
        if isinstance(self.parallelism, Unset):
            parallelism = UNSET
        else:
            parallelism = self.parallelism

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if from_ is not UNSET:
            field_dict["from"] = from_
        if items is not UNSET:
            field_dict["items"] = items
        if parallelism is not UNSET:
            field_dict["parallelism"] = parallelism

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_from_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        from_ = _parse_from_(d.pop("from", UNSET))

        def _parse_items(data: object) -> list[Any] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                items_type_0 = cast(list[Any], data)

                return items_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Any] | None | Unset, data)

        items = _parse_items(d.pop("items", UNSET))

        def _parse_parallelism(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        parallelism = _parse_parallelism(d.pop("parallelism", UNSET))

        map_over = cls(
            from_=from_,
            items=items,
            parallelism=parallelism,
        )

        return map_over
