from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast


T = TypeVar("T", bound="Group")


@_attrs_define
class Group:
    """A concurrent group of steps.

    Attributes:
        name (str):
        steps (list[str]): Member step names; members must not depend on each other.
        depends (list[str] | Unset): Steps or groups every member waits for and needs to succeed: plain
            names only (an expression such as `a.failed` goes on the member
            steps' own `depends`).
    """

    name: str
    steps: list[str]
    depends: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        steps = self.steps

        depends: list[str] | Unset = UNSET
        if not isinstance(self.depends, Unset):
            depends = self.depends

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "steps": steps,
            }
        )
        if depends is not UNSET:
            field_dict["depends"] = depends

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        steps = cast(list[str], d.pop("steps"))

        depends = cast(list[str], d.pop("depends", UNSET))

        group = cls(
            name=name,
            steps=steps,
            depends=depends,
        )

        return group
