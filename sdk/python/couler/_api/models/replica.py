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
    """One role of a training job.

    Attributes:
        count (int): Number of replicas in this role (at least 1).
        args (list[str] | Unset): This role's arguments instead of the job's.
        command (list[str] | Unset): This role's entrypoint instead of the job's; it runs with this
            role's `args` only. (MPI workers run only their own command and
            args, the image's entrypoint without them.)
        image (None | str | Unset): This role's image instead of the job's.
        resources (None | Resources | Unset):
    """

    count: int
    args: list[str] | Unset = UNSET
    command: list[str] | Unset = UNSET
    image: None | str | Unset = UNSET
    resources: None | Resources | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.resources import Resources  # noqa: PLC0415

        count = self.count

        args: list[str] | Unset = UNSET
        if not isinstance(self.args, Unset):
            args = self.args

        command: list[str] | Unset = UNSET
        if not isinstance(self.command, Unset):
            command = self.command

        image: None | str | Unset
        if isinstance(self.image, Unset):
            image = UNSET
        else:
            image = self.image

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
        if args is not UNSET:
            field_dict["args"] = args
        if command is not UNSET:
            field_dict["command"] = command
        if image is not UNSET:
            field_dict["image"] = image
        if resources is not UNSET:
            field_dict["resources"] = resources

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.resources import Resources  # noqa: PLC0415

        d = dict(src_dict)
        count = d.pop("count")

        args = cast(list[str], d.pop("args", UNSET))

        command = cast(list[str], d.pop("command", UNSET))

        def _parse_image(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image = _parse_image(d.pop("image", UNSET))

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
            args=args,
            command=command,
            image=image,
            resources=resources,
        )

        return replica
