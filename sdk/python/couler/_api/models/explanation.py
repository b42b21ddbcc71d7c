from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field


if TYPE_CHECKING:
    from ..models.explain_totals import ExplainTotals
    from ..models.explained_step import ExplainedStep


T = TypeVar("T", bound="Explanation")


@_attrs_define
class Explanation:
    """
    Attributes:
        degraded (bool): The cache index was unavailable: steps that could have hit show as
            misses with reason `cache unavailable`.
        steps (list[ExplainedStep]): Every step (then every exit handler), in document order.
        totals (ExplainTotals):
        workflow (str): The workflow's name.
    """

    degraded: bool
    steps: list[ExplainedStep]
    totals: ExplainTotals
    workflow: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        degraded = self.degraded

        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)

        totals = self.totals.to_dict()

        workflow = self.workflow

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "degraded": degraded,
                "steps": steps,
                "totals": totals,
                "workflow": workflow,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.explain_totals import ExplainTotals  # noqa: PLC0415
        from ..models.explained_step import ExplainedStep  # noqa: PLC0415

        d = dict(src_dict)
        degraded = d.pop("degraded")

        steps = []
        _steps = d.pop("steps")
        for steps_item_data in _steps:
            steps_item = ExplainedStep.from_dict(steps_item_data)

            steps.append(steps_item)

        totals = ExplainTotals.from_dict(d.pop("totals"))

        workflow = d.pop("workflow")

        explanation = cls(
            degraded=degraded,
            steps=steps,
            totals=totals,
            workflow=workflow,
        )

        explanation.additional_properties = d
        return explanation

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
