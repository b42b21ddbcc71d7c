from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.run_status import check_run_status
from ..models.run_status import RunStatus
from typing import cast
import datetime

if TYPE_CHECKING:
    from ..models.run_view_labels import RunViewLabels
    from ..models.run_view_outputs_type_0 import RunViewOutputsType0
    from ..models.run_view_parameters import RunViewParameters
    from ..models.run_view_step_counts_type_0 import RunViewStepCountsType0
    from ..models.run_workflow_ref import RunWorkflowRef
    from ..models.step_view import StepView
    from ..models.trigger_view import TriggerView


T = TypeVar("T", bound="RunView")


@_attrs_define
class RunView:
    """
    Attributes:
        attempt (int): 1, plus one per retry.
        cancel_requested (bool): A cancel was asked for and the scheduler is stopping the run.
        created_at (datetime.datetime):
        created_by (str):
        id (str): A run id.
        ir_hash (str): Digest of the IR the run executes.
        labels (RunViewLabels):
        parameters (RunViewParameters):
        priority (int):
        queued_at (datetime.datetime):
        status (RunStatus): `queued → planning → running → succeeded | failed | cancelled`
        trigger (TriggerView): What started a run.
        updated_at (datetime.datetime):
        workflow_name (str):
        cache_saved_ms (int | None | Unset): Compute time the run's cached steps (and steps not needed) saved,
            in milliseconds (in lists and `GET /v1/runs/{id}`).
        finished_at (datetime.datetime | None | Unset):
        last_event_id (int | None | Unset): The id of the run's latest event when `steps` was read (in `GET
            /v1/runs/{id}`): follow `/events` with `Last-Event-ID` set to it and
            no change is missed (one may arrive that `steps` already shows).
        message (None | str | Unset):
        outputs (None | RunViewOutputsType0 | Unset): What the run produced beyond its steps (in `GET /v1/runs/{id}`):
            `tuning.STEP` holds a hyperparameter search's best trial and its
            full trial table.
        started_at (datetime.datetime | None | Unset):
        step_counts (None | RunViewStepCountsType0 | Unset): How many of the run's steps are in each status (in lists;
            steps of
            its plan that have not started are not counted).
        steps (list[StepView] | Unset): Per-step status (in `GET /v1/runs/{id}`): every step the run has
            dispatched, cached or skipped and, while it is running, the rest of
            its plan as `pending`.
        workflow (None | RunWorkflowRef | Unset):
    """

    attempt: int
    cancel_requested: bool
    created_at: datetime.datetime
    created_by: str
    id: str
    ir_hash: str
    labels: RunViewLabels
    parameters: RunViewParameters
    priority: int
    queued_at: datetime.datetime
    status: RunStatus
    trigger: TriggerView
    updated_at: datetime.datetime
    workflow_name: str
    cache_saved_ms: int | None | Unset = UNSET
    finished_at: datetime.datetime | None | Unset = UNSET
    last_event_id: int | None | Unset = UNSET
    message: None | str | Unset = UNSET
    outputs: None | RunViewOutputsType0 | Unset = UNSET
    started_at: datetime.datetime | None | Unset = UNSET
    step_counts: None | RunViewStepCountsType0 | Unset = UNSET
    steps: list[StepView] | Unset = UNSET
    workflow: None | RunWorkflowRef | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.run_view_outputs_type_0 import RunViewOutputsType0  # noqa: PLC0415
        from ..models.run_view_step_counts_type_0 import RunViewStepCountsType0  # noqa: PLC0415
        from ..models.run_workflow_ref import RunWorkflowRef  # noqa: PLC0415

        attempt = self.attempt

        cancel_requested = self.cancel_requested

        created_at = self.created_at.isoformat()

        created_by = self.created_by

        id = self.id

        ir_hash = self.ir_hash

        labels = self.labels.to_dict()

        parameters = self.parameters.to_dict()

        priority = self.priority

        queued_at = self.queued_at.isoformat()

        status: str = self.status

        trigger = self.trigger.to_dict()

        updated_at = self.updated_at.isoformat()

        workflow_name = self.workflow_name

        cache_saved_ms: int | None | Unset
        if isinstance(self.cache_saved_ms, Unset):
            cache_saved_ms = UNSET
        else:
            cache_saved_ms = self.cache_saved_ms

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        elif isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        last_event_id: int | None | Unset
        if isinstance(self.last_event_id, Unset):
            last_event_id = UNSET
        else:
            last_event_id = self.last_event_id

        message: None | str | Unset
        if isinstance(self.message, Unset):
            message = UNSET
        else:
            message = self.message

        outputs: dict[str, Any] | None | Unset
        if isinstance(self.outputs, Unset):
            outputs = UNSET
        elif isinstance(self.outputs, RunViewOutputsType0):
            outputs = self.outputs.to_dict()
        else:
            outputs = self.outputs

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        elif isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        step_counts: dict[str, Any] | None | Unset
        if isinstance(self.step_counts, Unset):
            step_counts = UNSET
        elif isinstance(self.step_counts, RunViewStepCountsType0):
            step_counts = self.step_counts.to_dict()
        else:
            step_counts = self.step_counts

        steps: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.steps, Unset):
            steps = []
            for steps_item_data in self.steps:
                steps_item = steps_item_data.to_dict()
                steps.append(steps_item)

        workflow: dict[str, Any] | None | Unset
        if isinstance(self.workflow, Unset):
            workflow = UNSET
        elif isinstance(self.workflow, RunWorkflowRef):
            workflow = self.workflow.to_dict()
        else:
            workflow = self.workflow

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "cancel_requested": cancel_requested,
                "created_at": created_at,
                "created_by": created_by,
                "id": id,
                "ir_hash": ir_hash,
                "labels": labels,
                "parameters": parameters,
                "priority": priority,
                "queued_at": queued_at,
                "status": status,
                "trigger": trigger,
                "updated_at": updated_at,
                "workflow_name": workflow_name,
            }
        )
        if cache_saved_ms is not UNSET:
            field_dict["cache_saved_ms"] = cache_saved_ms
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if last_event_id is not UNSET:
            field_dict["last_event_id"] = last_event_id
        if message is not UNSET:
            field_dict["message"] = message
        if outputs is not UNSET:
            field_dict["outputs"] = outputs
        if started_at is not UNSET:
            field_dict["started_at"] = started_at
        if step_counts is not UNSET:
            field_dict["step_counts"] = step_counts
        if steps is not UNSET:
            field_dict["steps"] = steps
        if workflow is not UNSET:
            field_dict["workflow"] = workflow

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_view_labels import RunViewLabels  # noqa: PLC0415
        from ..models.run_view_outputs_type_0 import RunViewOutputsType0  # noqa: PLC0415
        from ..models.run_view_parameters import RunViewParameters  # noqa: PLC0415
        from ..models.run_view_step_counts_type_0 import RunViewStepCountsType0  # noqa: PLC0415
        from ..models.run_workflow_ref import RunWorkflowRef  # noqa: PLC0415
        from ..models.step_view import StepView  # noqa: PLC0415
        from ..models.trigger_view import TriggerView  # noqa: PLC0415

        d = dict(src_dict)
        attempt = d.pop("attempt")

        cancel_requested = d.pop("cancel_requested")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        id = d.pop("id")

        ir_hash = d.pop("ir_hash")

        labels = RunViewLabels.from_dict(d.pop("labels"))

        parameters = RunViewParameters.from_dict(d.pop("parameters"))

        priority = d.pop("priority")

        queued_at = datetime.datetime.fromisoformat(d.pop("queued_at"))

        status = check_run_status(d.pop("status"))

        trigger = TriggerView.from_dict(d.pop("trigger"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        workflow_name = d.pop("workflow_name")

        def _parse_cache_saved_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        cache_saved_ms = _parse_cache_saved_ms(d.pop("cache_saved_ms", UNSET))

        def _parse_finished_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        def _parse_last_event_id(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_event_id = _parse_last_event_id(d.pop("last_event_id", UNSET))

        def _parse_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message = _parse_message(d.pop("message", UNSET))

        def _parse_outputs(data: object) -> None | RunViewOutputsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                outputs_type_0 = RunViewOutputsType0.from_dict(data)

                return outputs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunViewOutputsType0 | Unset, data)

        outputs = _parse_outputs(d.pop("outputs", UNSET))

        def _parse_started_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        def _parse_step_counts(data: object) -> None | RunViewStepCountsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                step_counts_type_0 = RunViewStepCountsType0.from_dict(data)

                return step_counts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunViewStepCountsType0 | Unset, data)

        step_counts = _parse_step_counts(d.pop("step_counts", UNSET))

        _steps = d.pop("steps", UNSET)
        steps: list[StepView] | Unset = UNSET
        if _steps is not UNSET:
            steps = []
            for steps_item_data in _steps:
                steps_item = StepView.from_dict(steps_item_data)

                steps.append(steps_item)

        def _parse_workflow(data: object) -> None | RunWorkflowRef | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                workflow_type_0 = RunWorkflowRef.from_dict(data)

                return workflow_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunWorkflowRef | Unset, data)

        workflow = _parse_workflow(d.pop("workflow", UNSET))

        run_view = cls(
            attempt=attempt,
            cancel_requested=cancel_requested,
            created_at=created_at,
            created_by=created_by,
            id=id,
            ir_hash=ir_hash,
            labels=labels,
            parameters=parameters,
            priority=priority,
            queued_at=queued_at,
            status=status,
            trigger=trigger,
            updated_at=updated_at,
            workflow_name=workflow_name,
            cache_saved_ms=cache_saved_ms,
            finished_at=finished_at,
            last_event_id=last_event_id,
            message=message,
            outputs=outputs,
            started_at=started_at,
            step_counts=step_counts,
            steps=steps,
            workflow=workflow,
        )

        run_view.additional_properties = d
        return run_view

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
