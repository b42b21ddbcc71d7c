from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime

if TYPE_CHECKING:
    from ..models.version_view import VersionView
    from ..models.workflow_summary_labels import WorkflowSummaryLabels


T = TypeVar("T", bound="WorkflowDetail")


@_attrs_define
class WorkflowDetail:
    """
    Attributes:
        created_at (datetime.datetime):
        created_by (str):
        id (str): A workflow id.
        labels (WorkflowSummaryLabels):
        latest_version (int):
        name (str):
        updated_at (datetime.datetime):
        version (VersionView):
        description (None | str | Unset):
    """

    created_at: datetime.datetime
    created_by: str
    id: str
    labels: WorkflowSummaryLabels
    latest_version: int
    name: str
    updated_at: datetime.datetime
    version: VersionView
    description: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        created_by = self.created_by

        id = self.id

        labels = self.labels.to_dict()

        latest_version = self.latest_version

        name = self.name

        updated_at = self.updated_at.isoformat()

        version = self.version.to_dict()

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "created_by": created_by,
                "id": id,
                "labels": labels,
                "latest_version": latest_version,
                "name": name,
                "updated_at": updated_at,
                "version": version,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.version_view import VersionView  # noqa: PLC0415
        from ..models.workflow_summary_labels import WorkflowSummaryLabels  # noqa: PLC0415

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        id = d.pop("id")

        labels = WorkflowSummaryLabels.from_dict(d.pop("labels"))

        latest_version = d.pop("latest_version")

        name = d.pop("name")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        version = VersionView.from_dict(d.pop("version"))

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        workflow_detail = cls(
            created_at=created_at,
            created_by=created_by,
            id=id,
            labels=labels,
            latest_version=latest_version,
            name=name,
            updated_at=updated_at,
            version=version,
            description=description,
        )

        workflow_detail.additional_properties = d
        return workflow_detail

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
