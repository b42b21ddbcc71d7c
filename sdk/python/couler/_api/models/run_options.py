from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.run_options_labels import RunOptionsLabels
    from ..models.run_options_parameters import RunOptionsParameters


T = TypeVar("T", bound="RunOptions")


@_attrs_define
class RunOptions:
    """How to run a workflow, where the workflow is given elsewhere.

    Attributes:
        labels (RunOptionsLabels | Unset): Labels for search and grouping (Kubernetes label syntax).
        parameters (RunOptionsParameters | Unset): Values for the workflow's parameters (strings, numbers or booleans).
        priority (int | None | Unset): Higher runs start first within the tenant (-1000 to 1000, default 0).
    """

    labels: RunOptionsLabels | Unset = UNSET
    parameters: RunOptionsParameters | Unset = UNSET
    priority: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        parameters: dict[str, Any] | Unset = UNSET
        if not isinstance(self.parameters, Unset):
            parameters = self.parameters.to_dict()

        priority: int | None | Unset
        if isinstance(self.priority, Unset):
            priority = UNSET
        else:
            priority = self.priority

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if labels is not UNSET:
            field_dict["labels"] = labels
        if parameters is not UNSET:
            field_dict["parameters"] = parameters
        if priority is not UNSET:
            field_dict["priority"] = priority

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_options_labels import RunOptionsLabels  # noqa: PLC0415
        from ..models.run_options_parameters import RunOptionsParameters  # noqa: PLC0415

        d = dict(src_dict)
        _labels = d.pop("labels", UNSET)
        labels: RunOptionsLabels | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = RunOptionsLabels.from_dict(_labels)

        _parameters = d.pop("parameters", UNSET)
        parameters: RunOptionsParameters | Unset
        if isinstance(_parameters, Unset):
            parameters = UNSET
        else:
            parameters = RunOptionsParameters.from_dict(_parameters)

        def _parse_priority(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        priority = _parse_priority(d.pop("priority", UNSET))

        run_options = cls(
            labels=labels,
            parameters=parameters,
            priority=priority,
        )

        return run_options
