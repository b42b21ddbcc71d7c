from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field


if TYPE_CHECKING:
    from ..models.advice_view import AdviceView
    from ..models.decision_view import DecisionView
    from ..models.part_view import PartView
    from ..models.planned_step_view import PlannedStepView
    from ..models.search_view import SearchView


T = TypeVar("T", bound="PlanView")


@_attrs_define
class PlanView:
    """
    Attributes:
        advice (list[AdviceView]):
        decisions (list[DecisionView]):
        engine (str): The engine the tenant's runs go to.
        parts (list[PartView]): Sub-workflows, in a submission order (empty: one workflow).
        steps (list[PlannedStepView]): Steps, then exit handlers, in document order.
        tuning (list[SearchView]):
        workflow (str):
    """

    advice: list[AdviceView]
    decisions: list[DecisionView]
    engine: str
    parts: list[PartView]
    steps: list[PlannedStepView]
    tuning: list[SearchView]
    workflow: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        advice = []
        for advice_item_data in self.advice:
            advice_item = advice_item_data.to_dict()
            advice.append(advice_item)

        decisions = []
        for decisions_item_data in self.decisions:
            decisions_item = decisions_item_data.to_dict()
            decisions.append(decisions_item)

        engine = self.engine

        parts = []
        for parts_item_data in self.parts:
            parts_item = parts_item_data.to_dict()
            parts.append(parts_item)

        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)

        tuning = []
        for tuning_item_data in self.tuning:
            tuning_item = tuning_item_data.to_dict()
            tuning.append(tuning_item)

        workflow = self.workflow

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "advice": advice,
                "decisions": decisions,
                "engine": engine,
                "parts": parts,
                "steps": steps,
                "tuning": tuning,
                "workflow": workflow,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.advice_view import AdviceView  # noqa: PLC0415
        from ..models.decision_view import DecisionView  # noqa: PLC0415
        from ..models.part_view import PartView  # noqa: PLC0415
        from ..models.planned_step_view import PlannedStepView  # noqa: PLC0415
        from ..models.search_view import SearchView  # noqa: PLC0415

        d = dict(src_dict)
        advice = []
        _advice = d.pop("advice")
        for advice_item_data in _advice:
            advice_item = AdviceView.from_dict(advice_item_data)

            advice.append(advice_item)

        decisions = []
        _decisions = d.pop("decisions")
        for decisions_item_data in _decisions:
            decisions_item = DecisionView.from_dict(decisions_item_data)

            decisions.append(decisions_item)

        engine = d.pop("engine")

        parts = []
        _parts = d.pop("parts")
        for parts_item_data in _parts:
            parts_item = PartView.from_dict(parts_item_data)

            parts.append(parts_item)

        steps = []
        _steps = d.pop("steps")
        for steps_item_data in _steps:
            steps_item = PlannedStepView.from_dict(steps_item_data)

            steps.append(steps_item)

        tuning = []
        _tuning = d.pop("tuning")
        for tuning_item_data in _tuning:
            tuning_item = SearchView.from_dict(tuning_item_data)

            tuning.append(tuning_item)

        workflow = d.pop("workflow")

        plan_view = cls(
            advice=advice,
            decisions=decisions,
            engine=engine,
            parts=parts,
            steps=steps,
            tuning=tuning,
            workflow=workflow,
        )

        plan_view.additional_properties = d
        return plan_view

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
