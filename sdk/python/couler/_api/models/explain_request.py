from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.couler_workflow import CoulerWorkflow
    from ..models.explain_request_parameters import ExplainRequestParameters


T = TypeVar("T", bound="ExplainRequest")


@_attrs_define
class ExplainRequest:
    """
    Attributes:
        ir (CoulerWorkflow | None | Unset):
        parameters (ExplainRequestParameters | Unset): Values for the workflow's parameters, as for a run.
        version (int | None | Unset): The version to explain; the latest when absent.
        workflow (None | str | Unset): A stored workflow: its `wf_…` id or its name. Omit when giving `ir`.
    """

    ir: CoulerWorkflow | None | Unset = UNSET
    parameters: ExplainRequestParameters | Unset = UNSET
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

        parameters: dict[str, Any] | Unset = UNSET
        if not isinstance(self.parameters, Unset):
            parameters = self.parameters.to_dict()

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
        if parameters is not UNSET:
            field_dict["parameters"] = parameters
        if version is not UNSET:
            field_dict["version"] = version
        if workflow is not UNSET:
            field_dict["workflow"] = workflow

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.couler_workflow import CoulerWorkflow  # noqa: PLC0415
        from ..models.explain_request_parameters import ExplainRequestParameters  # noqa: PLC0415

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

        _parameters = d.pop("parameters", UNSET)
        parameters: ExplainRequestParameters | Unset
        if isinstance(_parameters, Unset):
            parameters = UNSET
        else:
            parameters = ExplainRequestParameters.from_dict(_parameters)

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

        explain_request = cls(
            ir=ir,
            parameters=parameters,
            version=version,
            workflow=workflow,
        )

        return explain_request
