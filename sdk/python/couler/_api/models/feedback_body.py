from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define


T = TypeVar("T", bound="FeedbackBody")


@_attrs_define
class FeedbackBody:
    """How to revise the latest draft.

    Attributes:
        text (str): E.g. "use 4 GPUs for training".
    """

    text: str

    def to_dict(self) -> dict[str, Any]:
        text = self.text

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "text": text,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        text = d.pop("text")

        feedback_body = cls(
            text=text,
        )

        return feedback_body
