from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset


if TYPE_CHECKING:
    from ..models.input_artifact import InputArtifact


T = TypeVar("T", bound="Inputs")


@_attrs_define
class Inputs:
    """
    Attributes:
        artifacts (list[InputArtifact] | Unset): Artifacts from earlier steps, placed at a path before the step starts.
    """

    artifacts: list[InputArtifact] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        artifacts: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.artifacts, Unset):
            artifacts = []
            for artifacts_item_data in self.artifacts:
                artifacts_item = artifacts_item_data.to_dict()
                artifacts.append(artifacts_item)

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if artifacts is not UNSET:
            field_dict["artifacts"] = artifacts

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.input_artifact import InputArtifact  # noqa: PLC0415

        d = dict(src_dict)
        _artifacts = d.pop("artifacts", UNSET)
        artifacts: list[InputArtifact] | Unset = UNSET
        if _artifacts is not UNSET:
            artifacts = []
            for artifacts_item_data in _artifacts:
                artifacts_item = InputArtifact.from_dict(artifacts_item_data)

                artifacts.append(artifacts_item)

        inputs = cls(
            artifacts=artifacts,
        )

        return inputs
