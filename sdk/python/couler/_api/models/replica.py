from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.resources import Resources


T = TypeVar("T", bound="Replica")


@_attrs_define
class Replica:
    """
    Attributes:
        count (int): Number of replicas in this role (at least 1).
        resources (None | Resources | Unset):
    """

    count: int
    resources: None | Resources | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.resources import Resources  # noqa: PLC0415

        count = self.count

        resources: dict[str, Any] | None | Unset
        if isinstance(self.resources, Unset):
            resources = UNSET
        elif isinstance(self.resources, Resources):
            resources = self.resources.to_dict()
        else:
            resources = self.resources

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "count": count,
            }
        )
        if resources is not UNSET:
            field_dict["resources"] = resources

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.resources import Resources  # noqa: PLC0415

        d = dict(src_dict)
        count = d.pop("count")

        def _parse_resources(data: object) -> None | Resources | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                resources_type_0 = Resources.from_dict(data)

                return resources_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Resources | Unset, data)

        resources = _parse_resources(d.pop("resources", UNSET))

        replica = cls(
            count=count,
            resources=resources,
        )

        return replica
