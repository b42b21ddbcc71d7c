from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.couler_workflow_api_version import check_couler_workflow_api_version
from ..models.couler_workflow_api_version import CoulerWorkflowApiVersion
from typing import cast

if TYPE_CHECKING:
    from ..models.couler_workflow_labels import CoulerWorkflowLabels
    from ..models.group import Group
    from ..models.parameter import Parameter
    from ..models.schedule import Schedule
    from ..models.step import Step


T = TypeVar("T", bound="CoulerWorkflow")


@_attrs_define
class CoulerWorkflow:
    """A machine-learning workflow: a DAG of steps.

    Attributes:
        api_version (CoulerWorkflowApiVersion): IR version; must be `couler.dev/v1alpha1`.
        name (str): Workflow name: lowercase letters, digits and `-`, at most 63 characters.
        steps (list[Step]): The steps. Order does not matter: dependencies come from `depends`
            and from references to other steps' outputs.
        description (None | str | Unset):
        groups (list[Group] | Unset): Concurrent groups: members run side by side; depending on a group
            waits for all of its members.
        labels (CoulerWorkflowLabels | Unset): Labels for search and grouping (Kubernetes label syntax).
        on_exit (list[Step] | Unset): Exit handler: steps that run after the DAG ends, whatever its outcome
            (`{{workflow.status}}` tells which).
        parallelism (int | None | Unset): At most this many steps run at once.
        parameters (list[Parameter] | Unset): Workflow inputs, referenced as `{{workflow.parameters.NAME}}`.
        schedule (None | Schedule | Unset): Run the workflow on a schedule.
        timeout (int | None | str | Unset): Deadline of a run: once it has been running this long it fails
            ("deadline exceeded"), its running steps are stopped and nothing new
            starts; `onExit` steps still run. Last, so that workflows without
            one keep their content hash.
    """

    api_version: CoulerWorkflowApiVersion
    name: str
    steps: list[Step]
    description: None | str | Unset = UNSET
    groups: list[Group] | Unset = UNSET
    labels: CoulerWorkflowLabels | Unset = UNSET
    on_exit: list[Step] | Unset = UNSET
    parallelism: int | None | Unset = UNSET
    parameters: list[Parameter] | Unset = UNSET
    schedule: None | Schedule | Unset = UNSET
    timeout: int | None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.schedule import Schedule  # noqa: PLC0415

        api_version: str = self.api_version

        name = self.name

        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        groups: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.groups, Unset):
            groups = []
            for groups_item_data in self.groups:
                groups_item = groups_item_data.to_dict()
                groups.append(groups_item)

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        on_exit: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.on_exit, Unset):
            on_exit = []
            for on_exit_item_data in self.on_exit:
                on_exit_item = on_exit_item_data.to_dict()
                on_exit.append(on_exit_item)

        parallelism: int | None | Unset
        if isinstance(self.parallelism, Unset):
            parallelism = UNSET
        else:
            parallelism = self.parallelism

        parameters: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.parameters, Unset):
            parameters = []
            for parameters_item_data in self.parameters:
                parameters_item = parameters_item_data.to_dict()
                parameters.append(parameters_item)

        schedule: dict[str, Any] | None | Unset
        if isinstance(self.schedule, Unset):
            schedule = UNSET
        elif isinstance(self.schedule, Schedule):
            schedule = self.schedule.to_dict()
        else:
            schedule = self.schedule

        timeout: int | None | str | Unset
        if isinstance(self.timeout, Unset):
            timeout = UNSET
        else:
            timeout = self.timeout

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "apiVersion": api_version,
                "name": name,
                "steps": steps,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if groups is not UNSET:
            field_dict["groups"] = groups
        if labels is not UNSET:
            field_dict["labels"] = labels
        if on_exit is not UNSET:
            field_dict["onExit"] = on_exit
        if parallelism is not UNSET:
            field_dict["parallelism"] = parallelism
        if parameters is not UNSET:
            field_dict["parameters"] = parameters
        if schedule is not UNSET:
            field_dict["schedule"] = schedule
        if timeout is not UNSET:
            field_dict["timeout"] = timeout

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.couler_workflow_labels import CoulerWorkflowLabels  # noqa: PLC0415
        from ..models.group import Group  # noqa: PLC0415
        from ..models.parameter import Parameter  # noqa: PLC0415
        from ..models.schedule import Schedule  # noqa: PLC0415
        from ..models.step import Step  # noqa: PLC0415

        d = dict(src_dict)
        api_version = check_couler_workflow_api_version(d.pop("apiVersion"))

        name = d.pop("name")

        steps = []
        _steps = d.pop("steps")
        for steps_item_data in _steps:
            steps_item = Step.from_dict(steps_item_data)

            steps.append(steps_item)

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        _groups = d.pop("groups", UNSET)
        groups: list[Group] | Unset = UNSET
        if _groups is not UNSET:
            groups = []
            for groups_item_data in _groups:
                groups_item = Group.from_dict(groups_item_data)

                groups.append(groups_item)

        _labels = d.pop("labels", UNSET)
        labels: CoulerWorkflowLabels | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = CoulerWorkflowLabels.from_dict(_labels)

        _on_exit = d.pop("onExit", UNSET)
        on_exit: list[Step] | Unset = UNSET
        if _on_exit is not UNSET:
            on_exit = []
            for on_exit_item_data in _on_exit:
                on_exit_item = Step.from_dict(on_exit_item_data)

                on_exit.append(on_exit_item)

        def _parse_parallelism(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        parallelism = _parse_parallelism(d.pop("parallelism", UNSET))

        _parameters = d.pop("parameters", UNSET)
        parameters: list[Parameter] | Unset = UNSET
        if _parameters is not UNSET:
            parameters = []
            for parameters_item_data in _parameters:
                parameters_item = Parameter.from_dict(parameters_item_data)

                parameters.append(parameters_item)

        def _parse_schedule(data: object) -> None | Schedule | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                schedule_type_0 = Schedule.from_dict(data)

                return schedule_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Schedule | Unset, data)

        schedule = _parse_schedule(d.pop("schedule", UNSET))

        def _parse_timeout(data: object) -> int | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | str | Unset, data)

        timeout = _parse_timeout(d.pop("timeout", UNSET))

        couler_workflow = cls(
            api_version=api_version,
            name=name,
            steps=steps,
            description=description,
            groups=groups,
            labels=labels,
            on_exit=on_exit,
            parallelism=parallelism,
            parameters=parameters,
            schedule=schedule,
            timeout=timeout,
        )

        return couler_workflow
