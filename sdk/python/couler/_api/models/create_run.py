from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.couler_workflow import CoulerWorkflow
    from ..models.create_run_labels import CreateRunLabels
    from ..models.create_run_parameters import CreateRunParameters


T = TypeVar("T", bound="CreateRun")


@_attrs_define
class CreateRun:
    """
    Attributes:
        ir (CoulerWorkflow | None | Unset):
        labels (CreateRunLabels | Unset): Labels for search and grouping (Kubernetes label syntax).
        parameters (CreateRunParameters | Unset): Values for the workflow's parameters (strings, numbers or booleans).
        priority (int | None | Unset): Higher runs start first within the tenant (-1000 to 1000, default 0).
        version (int | None | Unset): The version to run; the latest when absent.
        workflow (None | str | Unset): The workflow to run: its `wf_…` id or its name. Omit when giving `ir`.
    """

    ir: CoulerWorkflow | None | Unset = UNSET
    labels: CreateRunLabels | Unset = UNSET
    parameters: CreateRunParameters | Unset = UNSET
    priority: int | None | Unset = UNSET
    version: int | None | Unset = UNSET
    workflow: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.couler_workflow import CoulerWorkflow  # noqa: PLC0415

        ir: dict[str, Any] | None | Unset
        if isinstance(self.ir, Unset):
            ir = UNSET
        elif isinstance(self.ir, CoulerWorkflow):
            ir = self.ir.to_dict()
        else:
            ir = self.ir

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        parameters: dict[str, Any] | Unset = UNSET
        if not isinstance(self.parameters, Unset):
            parameters = self.parameters.to_dict()

        priority: int | None | Unset
        if isinstance(self.priority, Unset):
            priority = UNSET
        else:
            priority = self.priority

        version: int | None | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        workflow: None | str | Unset
        if isinstance(self.workflow, Unset):
            workflow = UNSET
        else:
            workflow = self.workflow

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if ir is not UNSET:
            field_dict["ir"] = ir
        if labels is not UNSET:
            field_dict["labels"] = labels
        if parameters is not UNSET:
            field_dict["parameters"] = parameters
        if priority is not UNSET:
            field_dict["priority"] = priority
        if version is not UNSET:
            field_dict["version"] = version
        if workflow is not UNSET:
            field_dict["workflow"] = workflow

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.couler_workflow import CoulerWorkflow  # noqa: PLC0415
        from ..models.create_run_labels import CreateRunLabels  # noqa: PLC0415
        from ..models.create_run_parameters import CreateRunParameters  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_ir(data: object) -> CoulerWorkflow | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                ir_type_0 = CoulerWorkflow.from_dict(data)

                return ir_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CoulerWorkflow | None | Unset, data)

        ir = _parse_ir(d.pop("ir", UNSET))

        _labels = d.pop("labels", UNSET)
        labels: CreateRunLabels | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = CreateRunLabels.from_dict(_labels)

        _parameters = d.pop("parameters", UNSET)
        parameters: CreateRunParameters | Unset
        if isinstance(_parameters, Unset):
            parameters = UNSET
        else:
            parameters = CreateRunParameters.from_dict(_parameters)

        def _parse_priority(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        priority = _parse_priority(d.pop("priority", UNSET))

        def _parse_version(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        def _parse_workflow(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        workflow = _parse_workflow(d.pop("workflow", UNSET))

        create_run = cls(
            ir=ir,
            labels=labels,
            parameters=parameters,
            priority=priority,
            version=version,
            workflow=workflow,
        )

        return create_run
