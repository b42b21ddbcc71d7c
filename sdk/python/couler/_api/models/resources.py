from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="Resources")


@_attrs_define
class Resources:
    """Resource requests for a step (or one replica of a job).

    Attributes:
        cpu (float | None | str | Unset):
        gpu (int | None | Unset): Whole GPUs.
        memory (int | None | str | Unset):
    """

    cpu: float | None | str | Unset = UNSET
    gpu: int | None | Unset = UNSET
    memory: int | None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        cpu: float | None | str | Unset
        if isinstance(self.cpu, Unset):
            cpu = UNSET
        else:
            cpu = self.cpu

        gpu: int | None | Unset
        if isinstance(self.gpu, Unset):
            gpu = UNSET
        else:
            gpu = self.gpu

        memory: int | None | str | Unset
        if isinstance(self.memory, Unset):
            memory = UNSET
        else:
            memory = self.memory

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if cpu is not UNSET:
            field_dict["cpu"] = cpu
        if gpu is not UNSET:
            field_dict["gpu"] = gpu
        if memory is not UNSET:
            field_dict["memory"] = memory

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_cpu(data: object) -> float | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | str | Unset, data)

        cpu = _parse_cpu(d.pop("cpu", UNSET))

        def _parse_gpu(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        gpu = _parse_gpu(d.pop("gpu", UNSET))

        def _parse_memory(data: object) -> int | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | str | Unset, data)

        memory = _parse_memory(d.pop("memory", UNSET))

        resources = cls(
            cpu=cpu,
            gpu=gpu,
            memory=memory,
        )

        return resources
