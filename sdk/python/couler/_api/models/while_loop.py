from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define


if TYPE_CHECKING:
    from ..models.condition import Condition


T = TypeVar("T", bound="WhileLoop")


@_attrs_define
class WhileLoop:
    """A bounded loop: the step reruns while every condition (over its own
    outputs) holds, at most `maxIterations` times.

        Attributes:
            condition (list[Condition]):
            max_iterations (int):
    """

    condition: list[Condition]
    max_iterations: int

    def to_dict(self) -> dict[str, Any]:
        condition = []
        for condition_item_data in self.condition:
            condition_item = condition_item_data.to_dict()
            condition.append(condition_item)

        max_iterations = self.max_iterations

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "condition": condition,
                "maxIterations": max_iterations,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.condition import Condition  # noqa: PLC0415

        d = dict(src_dict)
        condition = []
        _condition = d.pop("condition")
        for condition_item_data in _condition:
            condition_item = Condition.from_dict(condition_item_data)

            condition.append(condition_item)

        max_iterations = d.pop("maxIterations")

        while_loop = cls(
            condition=condition,
            max_iterations=max_iterations,
        )

        return while_loop
