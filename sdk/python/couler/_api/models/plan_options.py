from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.plan_options_parameters import PlanOptionsParameters


T = TypeVar("T", bound="PlanOptions")


@_attrs_define
class PlanOptions:
    """
    Attributes:
        parameters (PlanOptionsParameters | Unset): Values for the workflow's parameters, as for a run.
        version (int | None | Unset): The version to plan; the latest when absent.
    """

    parameters: PlanOptionsParameters | Unset = UNSET
    version: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        parameters: dict[str, Any] | Unset = UNSET
        if not isinstance(self.parameters, Unset):
            parameters = self.parameters.to_dict()

        version: int | None | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if parameters is not UNSET:
            field_dict["parameters"] = parameters
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.plan_options_parameters import PlanOptionsParameters  # noqa: PLC0415

        d = dict(src_dict)
        _parameters = d.pop("parameters", UNSET)
        parameters: PlanOptionsParameters | Unset
        if isinstance(_parameters, Unset):
            parameters = UNSET
        else:
            parameters = PlanOptionsParameters.from_dict(_parameters)

        def _parse_version(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        plan_options = cls(
            parameters=parameters,
            version=version,
        )

        return plan_options
