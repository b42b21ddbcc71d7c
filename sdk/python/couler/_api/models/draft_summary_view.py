from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime


T = TypeVar("T", bound="DraftSummaryView")


@_attrs_define
class DraftSummaryView:
    """A draft in a generation's history.

    Attributes:
        author (str): `llm` or `offline`.
        created_at (datetime.datetime):
        created_by (str):
        n (int):
        total_tokens (int):
        feedback (None | str | Unset):
        score (float | None | Unset):
    """

    author: str
    created_at: datetime.datetime
    created_by: str
    n: int
    total_tokens: int
    feedback: None | str | Unset = UNSET
    score: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        author = self.author

        created_at = self.created_at.isoformat()

        created_by = self.created_by

        n = self.n

        total_tokens = self.total_tokens

        feedback: None | str | Unset
        if isinstance(self.feedback, Unset):
            feedback = UNSET
        else:
            feedback = self.feedback

        score: float | None | Unset
        if isinstance(self.score, Unset):
            score = UNSET
        else:
            score = self.score

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "author": author,
                "created_at": created_at,
                "created_by": created_by,
                "n": n,
                "total_tokens": total_tokens,
            }
        )
        if feedback is not UNSET:
            field_dict["feedback"] = feedback
        if score is not UNSET:
            field_dict["score"] = score

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        author = d.pop("author")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        n = d.pop("n")

        total_tokens = d.pop("total_tokens")

        def _parse_feedback(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        feedback = _parse_feedback(d.pop("feedback", UNSET))

        def _parse_score(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        score = _parse_score(d.pop("score", UNSET))

        draft_summary_view = cls(
            author=author,
            created_at=created_at,
            created_by=created_by,
            n=n,
            total_tokens=total_tokens,
            feedback=feedback,
            score=score,
        )

        draft_summary_view.additional_properties = d
        return draft_summary_view

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
