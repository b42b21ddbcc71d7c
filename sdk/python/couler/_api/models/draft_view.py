from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime

if TYPE_CHECKING:
    from ..models.author_view import AuthorView
    from ..models.couler_workflow import CoulerWorkflow
    from ..models.draft_view_decomposition import DraftViewDecomposition
    from ..models.draft_view_explanations_item import DraftViewExplanationsItem
    from ..models.draft_view_warnings_item import DraftViewWarningsItem
    from ..models.usage_view import UsageView


T = TypeVar("T", bound="DraftView")


@_attrs_define
class DraftView:
    """One draft: the IR and how it came about.

    Attributes:
        author (AuthorView): Who wrote a draft: `llm` (with its model) or `offline` (with why the
            LLM was not used).
        created_at (datetime.datetime):
        created_by (str):
        decomposition (DraftViewDecomposition): The typed subtasks the description was split into.
        explanations (list[DraftViewExplanationsItem]): Each step, the template it came from, and why it is there.
        n (int):
        usage (UsageView): Tokens spent on a draft.
        warnings (list[DraftViewWarningsItem]): Things the user should know (masked injections, assumptions …).
        workflow (CoulerWorkflow): A machine-learning workflow: a DAG of steps.
        feedback (None | str | Unset): The feedback this draft answers; absent for the first.
        score (float | None | Unset): The critique's score (0–1); absent for offline drafts.
    """

    author: AuthorView
    created_at: datetime.datetime
    created_by: str
    decomposition: DraftViewDecomposition
    explanations: list[DraftViewExplanationsItem]
    n: int
    usage: UsageView
    warnings: list[DraftViewWarningsItem]
    workflow: CoulerWorkflow
    feedback: None | str | Unset = UNSET
    score: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        author = self.author.to_dict()

        created_at = self.created_at.isoformat()

        created_by = self.created_by

        decomposition = self.decomposition.to_dict()

        explanations = []
        for explanations_item_data in self.explanations:
            explanations_item = explanations_item_data.to_dict()
            explanations.append(explanations_item)

        n = self.n

        usage = self.usage.to_dict()

        warnings = []
        for warnings_item_data in self.warnings:
            warnings_item = warnings_item_data.to_dict()
            warnings.append(warnings_item)

        workflow = self.workflow.to_dict()

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
                "decomposition": decomposition,
                "explanations": explanations,
                "n": n,
                "usage": usage,
                "warnings": warnings,
                "workflow": workflow,
            }
        )
        if feedback is not UNSET:
            field_dict["feedback"] = feedback
        if score is not UNSET:
            field_dict["score"] = score

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.author_view import AuthorView  # noqa: PLC0415
        from ..models.couler_workflow import CoulerWorkflow  # noqa: PLC0415
        from ..models.draft_view_decomposition import DraftViewDecomposition  # noqa: PLC0415
        from ..models.draft_view_explanations_item import DraftViewExplanationsItem  # noqa: PLC0415
        from ..models.draft_view_warnings_item import DraftViewWarningsItem  # noqa: PLC0415
        from ..models.usage_view import UsageView  # noqa: PLC0415

        d = dict(src_dict)
        author = AuthorView.from_dict(d.pop("author"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        decomposition = DraftViewDecomposition.from_dict(d.pop("decomposition"))

        explanations = []
        _explanations = d.pop("explanations")
        for explanations_item_data in _explanations:
            explanations_item = DraftViewExplanationsItem.from_dict(
                explanations_item_data
            )

            explanations.append(explanations_item)

        n = d.pop("n")

        usage = UsageView.from_dict(d.pop("usage"))

        warnings = []
        _warnings = d.pop("warnings")
        for warnings_item_data in _warnings:
            warnings_item = DraftViewWarningsItem.from_dict(warnings_item_data)

            warnings.append(warnings_item)

        workflow = CoulerWorkflow.from_dict(d.pop("workflow"))

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

        draft_view = cls(
            author=author,
            created_at=created_at,
            created_by=created_by,
            decomposition=decomposition,
            explanations=explanations,
            n=n,
            usage=usage,
            warnings=warnings,
            workflow=workflow,
            feedback=feedback,
            score=score,
        )

        draft_view.additional_properties = d
        return draft_view

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
