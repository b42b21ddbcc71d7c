from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field


import datetime

if TYPE_CHECKING:
    from ..models.couler_workflow import CoulerWorkflow


T = TypeVar("T", bound="VersionView")


@_attrs_define
class VersionView:
    """
    Attributes:
        created_at (datetime.datetime):
        created_by (str):
        hash_ (str): BLAKE3 digest of the canonical IR.
        ir (CoulerWorkflow): A machine-learning workflow: a DAG of steps.
        step_count (int):
        version (int):
    """

    created_at: datetime.datetime
    created_by: str
    hash_: str
    ir: CoulerWorkflow
    step_count: int
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        created_by = self.created_by

        hash_ = self.hash_

        ir = self.ir.to_dict()

        step_count = self.step_count

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "created_by": created_by,
                "hash": hash_,
                "ir": ir,
                "step_count": step_count,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.couler_workflow import CoulerWorkflow  # noqa: PLC0415

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        hash_ = d.pop("hash")

        ir = CoulerWorkflow.from_dict(d.pop("ir"))

        step_count = d.pop("step_count")

        version = d.pop("version")

        version_view = cls(
            created_at=created_at,
            created_by=created_by,
            hash_=hash_,
            ir=ir,
            step_count=step_count,
            version=version,
        )

        version_view.additional_properties = d
        return version_view

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
