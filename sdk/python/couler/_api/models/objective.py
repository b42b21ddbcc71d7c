from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.goal import check_goal
from ..models.goal import Goal
from typing import cast


T = TypeVar("T", bound="Objective")


@_attrs_define
class Objective:
    """
    Attributes:
        goal (Goal):
        metric (str): Name of the step's output parameter holding the metric.
        target (float | None | Unset): Stop early once a trial reaches this value.
    """

    goal: Goal
    metric: str
    target: float | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        goal: str = self.goal

        metric = self.metric

        target: float | None | Unset
        if isinstance(self.target, Unset):
            target = UNSET
        else:
            target = self.target

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "goal": goal,
                "metric": metric,
            }
        )
        if target is not UNSET:
            field_dict["target"] = target

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        goal = check_goal(d.pop("goal"))

        metric = d.pop("metric")

        def _parse_target(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        target = _parse_target(d.pop("target", UNSET))

        objective = cls(
            goal=goal,
            metric=metric,
            target=target,
        )

        return objective
