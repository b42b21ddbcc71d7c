from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.env_var import EnvVar


T = TypeVar("T", bound="Script")


@_attrs_define
class Script:
    """Inline source run by an interpreter in an image.

    Attributes:
        command (list[str]): Interpreter, e.g. `["python3"]` or `["bash"]`; the source file is appended.
        image (str):
        source (str): The program text.
        env (list[EnvVar] | Unset):
        working_dir (None | str | Unset):
    """

    command: list[str]
    image: str
    source: str
    env: list[EnvVar] | Unset = UNSET
    working_dir: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        command = self.command

        image = self.image

        source = self.source

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
                "command": command,
                "image": image,
                "source": source,
            }
        )
        if env is not UNSET:
            field_dict["env"] = env
        if working_dir is not UNSET:
            field_dict["workingDir"] = working_dir

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.env_var import EnvVar  # noqa: PLC0415

        d = dict(src_dict)
        command = cast(list[str], d.pop("command"))

        image = d.pop("image")

        source = d.pop("source")

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

        script = cls(
            command=command,
            image=image,
            source=source,
            env=env,
            working_dir=working_dir,
        )

        return script
