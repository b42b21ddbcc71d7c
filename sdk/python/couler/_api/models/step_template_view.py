from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field


import datetime

if TYPE_CHECKING:
    from ..models.step_template import StepTemplate


T = TypeVar("T", bound="StepTemplateView")


@_attrs_define
class StepTemplateView:
    """
    Attributes:
        created_at (datetime.datetime):
        created_by (str):
        name (str):
        template (StepTemplate): A step template: an IR step without its name, and what it is for.
        updated_at (datetime.datetime):
    """

    created_at: datetime.datetime
    created_by: str
    name: str
    template: StepTemplate
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        created_by = self.created_by

        name = self.name

        template = self.template.to_dict()

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "created_by": created_by,
                "name": name,
                "template": template,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.step_template import StepTemplate  # noqa: PLC0415

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        name = d.pop("name")

        template = StepTemplate.from_dict(d.pop("template"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        step_template_view = cls(
            created_at=created_at,
            created_by=created_by,
            name=name,
            template=template,
            updated_at=updated_at,
        )

        step_template_view.additional_properties = d
        return step_template_view

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
