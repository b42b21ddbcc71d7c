from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset


if TYPE_CHECKING:
    from ..models.output_artifact import OutputArtifact
    from ..models.output_parameter import OutputParameter


T = TypeVar("T", bound="Outputs")


@_attrs_define
class Outputs:
    """What a step produces. Its standard output is always available as
    `{{steps.STEP.outputs.result}}`.

        Attributes:
            artifacts (list[OutputArtifact] | Unset):
            parameters (list[OutputParameter] | Unset):
    """

    artifacts: list[OutputArtifact] | Unset = UNSET
    parameters: list[OutputParameter] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        artifacts: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.artifacts, Unset):
            artifacts = []
            for artifacts_item_data in self.artifacts:
                artifacts_item = artifacts_item_data.to_dict()
                artifacts.append(artifacts_item)

        parameters: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.parameters, Unset):
            parameters = []
            for parameters_item_data in self.parameters:
                parameters_item = parameters_item_data.to_dict()
                parameters.append(parameters_item)

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if artifacts is not UNSET:
            field_dict["artifacts"] = artifacts
        if parameters is not UNSET:
            field_dict["parameters"] = parameters

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.output_artifact import OutputArtifact  # noqa: PLC0415
        from ..models.output_parameter import OutputParameter  # noqa: PLC0415

        d = dict(src_dict)
        _artifacts = d.pop("artifacts", UNSET)
        artifacts: list[OutputArtifact] | Unset = UNSET
        if _artifacts is not UNSET:
            artifacts = []
            for artifacts_item_data in _artifacts:
                artifacts_item = OutputArtifact.from_dict(artifacts_item_data)

                artifacts.append(artifacts_item)

        _parameters = d.pop("parameters", UNSET)
        parameters: list[OutputParameter] | Unset = UNSET
        if _parameters is not UNSET:
            parameters = []
            for parameters_item_data in _parameters:
                parameters_item = OutputParameter.from_dict(parameters_item_data)

                parameters.append(parameters_item)

        outputs = cls(
            artifacts=artifacts,
            parameters=parameters,
        )

        return outputs
