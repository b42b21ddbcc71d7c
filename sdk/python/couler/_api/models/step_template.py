from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.step_template_parameters_item import StepTemplateParametersItem
    from ..models.step_template_step import StepTemplateStep


T = TypeVar("T", bound="StepTemplate")


@_attrs_define
class StepTemplate:
    """A step template: an IR step without its name, and what it is for.

    Attributes:
        description (str): What the step does; ranked against the user's words.
        id (str): The template's name in the tenant (a DNS label, not a built-in one).
        kind (str): The subtask kind it serves: load, preprocess, train, evaluate …
        step (StepTemplateStep): An IR step without `name` (see `openapi/ir.schema.json`).
        keywords (list[str] | Unset): Extra words to rank it by.
        needs (list[str] | Unset): What the planner wires in: data, models, scores, best, source, …
        parameters (list[StepTemplateParametersItem] | Unset): Workflow parameters (IR parameter declarations) the step
            reads.
    """

    description: str
    id: str
    kind: str
    step: StepTemplateStep
    keywords: list[str] | Unset = UNSET
    needs: list[str] | Unset = UNSET
    parameters: list[StepTemplateParametersItem] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        description = self.description

        id = self.id

        kind = self.kind

        step = self.step.to_dict()

        keywords: list[str] | Unset = UNSET
        if not isinstance(self.keywords, Unset):
            keywords = self.keywords

        needs: list[str] | Unset = UNSET
        if not isinstance(self.needs, Unset):
            needs = self.needs

        parameters: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.parameters, Unset):
            parameters = []
            for parameters_item_data in self.parameters:
                parameters_item = parameters_item_data.to_dict()
                parameters.append(parameters_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "description": description,
                "id": id,
                "kind": kind,
                "step": step,
            }
        )
        if keywords is not UNSET:
            field_dict["keywords"] = keywords
        if needs is not UNSET:
            field_dict["needs"] = needs
        if parameters is not UNSET:
            field_dict["parameters"] = parameters

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.step_template_parameters_item import StepTemplateParametersItem  # noqa: PLC0415
        from ..models.step_template_step import StepTemplateStep  # noqa: PLC0415

        d = dict(src_dict)
        description = d.pop("description")

        id = d.pop("id")

        kind = d.pop("kind")

        step = StepTemplateStep.from_dict(d.pop("step"))

        keywords = cast(list[str], d.pop("keywords", UNSET))

        needs = cast(list[str], d.pop("needs", UNSET))

        _parameters = d.pop("parameters", UNSET)
        parameters: list[StepTemplateParametersItem] | Unset = UNSET
        if _parameters is not UNSET:
            parameters = []
            for parameters_item_data in _parameters:
                parameters_item = StepTemplateParametersItem.from_dict(
                    parameters_item_data
                )

                parameters.append(parameters_item)

        step_template = cls(
            description=description,
            id=id,
            kind=kind,
            step=step,
            keywords=keywords,
            needs=needs,
            parameters=parameters,
        )

        step_template.additional_properties = d
        return step_template

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
