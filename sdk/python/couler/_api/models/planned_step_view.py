from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.step_action import check_step_action
from ..models.step_action import StepAction
from typing import cast


T = TypeVar("T", bound="PlannedStepView")


@_attrs_define
class PlannedStepView:
    """
    Attributes:
        action (StepAction): What happens to a step.
        exit_handler (bool):
        name (str):
        cpu (None | str | Unset): CPU and memory requests as planned (after resource advice).
        memory (None | str | Unset):
        part (int | None | Unset): The sub-workflow (index into `parts`) that runs the step, when split.
        why (list[str] | Unset): The optimizer's reasons concerning this step.
    """

    action: StepAction
    exit_handler: bool
    name: str
    cpu: None | str | Unset = UNSET
    memory: None | str | Unset = UNSET
    part: int | None | Unset = UNSET
    why: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        action: str = self.action

        exit_handler = self.exit_handler

        name = self.name

        cpu: None | str | Unset
        if isinstance(self.cpu, Unset):
            cpu = UNSET
        else:
            cpu = self.cpu

        memory: None | str | Unset
        if isinstance(self.memory, Unset):
            memory = UNSET
        else:
            memory = self.memory

        part: int | None | Unset
        if isinstance(self.part, Unset):
            part = UNSET
        else:
            part = self.part

        why: list[str] | Unset = UNSET
        if not isinstance(self.why, Unset):
            why = self.why

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
                "exit_handler": exit_handler,
                "name": name,
            }
        )
        if cpu is not UNSET:
            field_dict["cpu"] = cpu
        if memory is not UNSET:
            field_dict["memory"] = memory
        if part is not UNSET:
            field_dict["part"] = part
        if why is not UNSET:
            field_dict["why"] = why

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        action = check_step_action(d.pop("action"))

        exit_handler = d.pop("exit_handler")

        name = d.pop("name")

        def _parse_cpu(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cpu = _parse_cpu(d.pop("cpu", UNSET))

        def _parse_memory(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        memory = _parse_memory(d.pop("memory", UNSET))

        def _parse_part(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        part = _parse_part(d.pop("part", UNSET))

        why = cast(list[str], d.pop("why", UNSET))

        planned_step_view = cls(
            action=action,
            exit_handler=exit_handler,
            name=name,
            cpu=cpu,
            memory=memory,
            part=part,
            why=why,
        )

        planned_step_view.additional_properties = d
        return planned_step_view

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
