from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="InvalidateRequest")


@_attrs_define
class InvalidateRequest:
    """Exactly one selector: `workflow` with `step`, `image`, `version` or
    `all: true`. Only entries the tenant's own runs produced are removed.

        Attributes:
            all_ (bool | None | Unset): Every entry the tenant produced (must be `true`).
            image (None | str | Unset): Every entry produced by this image, e.g. `python:3.12`.
            step (None | str | Unset): The step of `workflow`.
            version (None | str | Unset): Every entry of steps with this `cache.version`.
            workflow (None | str | Unset): A workflow (name or `wf_…` id) whose `step` wrote the entries or
                reused them; needs `step`.
    """

    all_: bool | None | Unset = UNSET
    image: None | str | Unset = UNSET
    step: None | str | Unset = UNSET
    version: None | str | Unset = UNSET
    workflow: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        all_: bool | None | Unset
        if isinstance(self.all_, Unset):
            all_ = UNSET
        else:
            all_ = self.all_

        image: None | str | Unset
        if isinstance(self.image, Unset):
            image = UNSET
        else:
            image = self.image

        step: None | str | Unset
        if isinstance(self.step, Unset):
            step = UNSET
        else:
            step = self.step

        version: None | str | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        workflow: None | str | Unset
        if isinstance(self.workflow, Unset):
            workflow = UNSET
        else:
            workflow = self.workflow

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if all_ is not UNSET:
            field_dict["all"] = all_
        if image is not UNSET:
            field_dict["image"] = image
        if step is not UNSET:
            field_dict["step"] = step
        if version is not UNSET:
            field_dict["version"] = version
        if workflow is not UNSET:
            field_dict["workflow"] = workflow

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_all_(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        all_ = _parse_all_(d.pop("all", UNSET))

        def _parse_image(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image = _parse_image(d.pop("image", UNSET))

        def _parse_step(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        step = _parse_step(d.pop("step", UNSET))

        def _parse_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        def _parse_workflow(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        workflow = _parse_workflow(d.pop("workflow", UNSET))

        invalidate_request = cls(
            all_=all_,
            image=image,
            step=step,
            version=version,
            workflow=workflow,
        )

        return invalidate_request
