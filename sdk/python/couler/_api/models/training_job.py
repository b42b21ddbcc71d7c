from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.framework import check_framework
from ..models.framework import Framework
from typing import cast

if TYPE_CHECKING:
    from ..models.env_var import EnvVar
    from ..models.training_job_replicas import TrainingJobReplicas


T = TypeVar("T", bound="TrainingJob")


@_attrs_define
class TrainingJob:
    """A distributed training job (Kubeflow training operator style). Each
    role runs the job's image, command and args unless the role sets its
    own (see [`Replica`]).

        Attributes:
            framework (Framework):
            image (str):
            replicas (TrainingJobReplicas): Replicas by role. Roles: pytorch `master`, `worker`; tensorflow
                `chief`, `worker`, `ps`, `evaluator`; mpi `launcher`, `worker`.
            args (list[str] | Unset):
            command (list[str] | Unset):
            env (list[EnvVar] | Unset):
            working_dir (None | str | Unset):
    """

    framework: Framework
    image: str
    replicas: TrainingJobReplicas
    args: list[str] | Unset = UNSET
    command: list[str] | Unset = UNSET
    env: list[EnvVar] | Unset = UNSET
    working_dir: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        framework: str = self.framework

        image = self.image

        replicas = self.replicas.to_dict()

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
                "framework": framework,
                "image": image,
                "replicas": replicas,
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
        from ..models.training_job_replicas import TrainingJobReplicas  # noqa: PLC0415

        d = dict(src_dict)
        framework = check_framework(d.pop("framework"))

        image = d.pop("image")

        replicas = TrainingJobReplicas.from_dict(d.pop("replicas"))

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

        training_job = cls(
            framework=framework,
            image=image,
            replicas=replicas,
            args=args,
            command=command,
            env=env,
            working_dir=working_dir,
        )

        return training_job
