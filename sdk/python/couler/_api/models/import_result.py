from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.couler_workflow import CoulerWorkflow
    from ..models.run_view import RunView
    from ..models.unsupported_item import UnsupportedItem
    from ..models.workflow_detail import WorkflowDetail


T = TypeVar("T", bound="ImportResult")


@_attrs_define
class ImportResult:
    """The imported workflow, what was left behind, and what was done with it.

    Attributes:
        unsupported (list[UnsupportedItem]):
        workflow (CoulerWorkflow): A machine-learning workflow: a DAG of steps.
        run (None | RunView | Unset):
        stored (None | Unset | WorkflowDetail):
    """

    unsupported: list[UnsupportedItem]
    workflow: CoulerWorkflow
    run: None | RunView | Unset = UNSET
    stored: None | Unset | WorkflowDetail = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.run_view import RunView  # noqa: PLC0415
        from ..models.workflow_detail import WorkflowDetail  # noqa: PLC0415

        unsupported = []
        for unsupported_item_data in self.unsupported:
            unsupported_item = unsupported_item_data.to_dict()
            unsupported.append(unsupported_item)

        workflow = self.workflow.to_dict()

        run: dict[str, Any] | None | Unset
        if isinstance(self.run, Unset):
            run = UNSET
        elif isinstance(self.run, RunView):
            run = self.run.to_dict()
        else:
            run = self.run

        stored: dict[str, Any] | None | Unset
        if isinstance(self.stored, Unset):
            stored = UNSET
        elif isinstance(self.stored, WorkflowDetail):
            stored = self.stored.to_dict()
        else:
            stored = self.stored

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "unsupported": unsupported,
                "workflow": workflow,
            }
        )
        if run is not UNSET:
            field_dict["run"] = run
        if stored is not UNSET:
            field_dict["stored"] = stored

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.couler_workflow import CoulerWorkflow  # noqa: PLC0415
        from ..models.run_view import RunView  # noqa: PLC0415
        from ..models.unsupported_item import UnsupportedItem  # noqa: PLC0415
        from ..models.workflow_detail import WorkflowDetail  # noqa: PLC0415

        d = dict(src_dict)
        unsupported = []
        _unsupported = d.pop("unsupported")
        for unsupported_item_data in _unsupported:
            unsupported_item = UnsupportedItem.from_dict(unsupported_item_data)

            unsupported.append(unsupported_item)

        workflow = CoulerWorkflow.from_dict(d.pop("workflow"))

        def _parse_run(data: object) -> None | RunView | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                run_type_0 = RunView.from_dict(data)

                return run_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunView | Unset, data)

        run = _parse_run(d.pop("run", UNSET))

        def _parse_stored(data: object) -> None | Unset | WorkflowDetail:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                stored_type_0 = WorkflowDetail.from_dict(data)

                return stored_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WorkflowDetail, data)

        stored = _parse_stored(d.pop("stored", UNSET))

        import_result = cls(
            unsupported=unsupported,
            workflow=workflow,
            run=run,
            stored=stored,
        )

        import_result.additional_properties = d
        return import_result

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
