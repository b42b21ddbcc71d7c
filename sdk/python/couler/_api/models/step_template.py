from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.step_template_kind import check_step_template_kind
from ..models.step_template_kind import StepTemplateKind
from ..models.step_template_needs_item import check_step_template_needs_item
from ..models.step_template_needs_item import StepTemplateNeedsItem
from typing import cast

if TYPE_CHECKING:
    from ..models.parameter import Parameter
    from ..models.template_step import TemplateStep


T = TypeVar("T", bound="StepTemplate")


@_attrs_define
class StepTemplate:
    """A step template: an IR step without its name, and what it is for.

    Attributes:
        description (str): What the step does; ranked against the user's words.
        id (str): The template's name in the tenant (a DNS label, not a built-in one).
        kind (StepTemplateKind): The subtask kind it serves: load, preprocess, train, evaluate …
        step (TemplateStep): An IR step without its `name` (the planner names each step it places).
        keywords (list[str] | Unset): Extra words to rank it by.
        needs (list[StepTemplateNeedsItem] | Unset): What the planner wires in: data, models, scores, best, source, …
        parameters (list[Parameter] | Unset): Workflow parameters (IR parameter declarations) the step reads.
    """

    description: str
    id: str
    kind: StepTemplateKind
    step: TemplateStep
    keywords: list[str] | Unset = UNSET
    needs: list[StepTemplateNeedsItem] | Unset = UNSET
    parameters: list[Parameter] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        description = self.description

        id = self.id

        kind: str = self.kind

        step = self.step.to_dict()

        keywords: list[str] | Unset = UNSET
        if not isinstance(self.keywords, Unset):
            keywords = self.keywords

        needs: list[str] | Unset = UNSET
        if not isinstance(self.needs, Unset):
            needs = []
            for needs_item_data in self.needs:
                needs_item: str = needs_item_data
                needs.append(needs_item)

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
        from ..models.parameter import Parameter  # noqa: PLC0415
        from ..models.template_step import TemplateStep  # noqa: PLC0415

        d = dict(src_dict)
        description = d.pop("description")

        id = d.pop("id")

        kind = check_step_template_kind(d.pop("kind"))

        step = TemplateStep.from_dict(d.pop("step"))

        keywords = cast(list[str], d.pop("keywords", UNSET))

        _needs = d.pop("needs", UNSET)
        needs: list[StepTemplateNeedsItem] | Unset = UNSET
        if _needs is not UNSET:
            needs = []
            for needs_item_data in _needs:
                needs_item = check_step_template_needs_item(needs_item_data)

                needs.append(needs_item)

        _parameters = d.pop("parameters", UNSET)
        parameters: list[Parameter] | Unset = UNSET
        if _parameters is not UNSET:
            parameters = []
            for parameters_item_data in _parameters:
                parameters_item = Parameter.from_dict(parameters_item_data)

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
