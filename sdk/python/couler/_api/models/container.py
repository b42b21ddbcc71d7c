from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.env_var import EnvVar


T = TypeVar("T", bound="Container")


@_attrs_define
class Container:
    """A container to run.

    Attributes:
        image (str): Image reference; pin by digest (`…@sha256:…`) for exact caching.
        args (list[str] | Unset):
        command (list[str] | Unset): Entrypoint; the image's own when empty.
        env (list[EnvVar] | Unset):
        working_dir (None | str | Unset):
    """

    image: str
    args: list[str] | Unset = UNSET
    command: list[str] | Unset = UNSET
    env: list[EnvVar] | Unset = UNSET
    working_dir: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        image = self.image

        args: list[str] | Unset = UNSET
        if not isinstance(self.args, Unset):
            args = self.args

        command: list[str] | Unset = UNSET
        if not isinstance(self.command, Unset):
            command = self.command

        env: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = []
            for env_item_data in self.env:
                env_item = env_item_data.to_dict()
                env.append(env_item)

        working_dir: None | str | Unset
        if isinstance(self.working_dir, Unset):
            working_dir = UNSET
        else:
            working_dir = self.working_dir

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "image": image,
            }
        )
        if args is not UNSET:
            field_dict["args"] = args
        if command is not UNSET:
            field_dict["command"] = command
        if env is not UNSET:
            field_dict["env"] = env
        if working_dir is not UNSET:
            field_dict["workingDir"] = working_dir

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.env_var import EnvVar  # noqa: PLC0415

        d = dict(src_dict)
        image = d.pop("image")

        args = cast(list[str], d.pop("args", UNSET))

        command = cast(list[str], d.pop("command", UNSET))

        _env = d.pop("env", UNSET)
        env: list[EnvVar] | Unset = UNSET
        if _env is not UNSET:
            env = []
            for env_item_data in _env:
                env_item = EnvVar.from_dict(env_item_data)

                env.append(env_item)

        def _parse_working_dir(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        working_dir = _parse_working_dir(d.pop("workingDir", UNSET))

        container = cls(
            image=image,
            args=args,
            command=command,
            env=env,
            working_dir=working_dir,
        )

        return container
