from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime

if TYPE_CHECKING:
    from ..models.draft_summary_view import DraftSummaryView
    from ..models.draft_view import DraftView


T = TypeVar("T", bound="GenerationDetail")


@_attrs_define
class GenerationDetail:
    """A generation with its latest draft and the history of every draft.

    Attributes:
        created_at (datetime.datetime):
        created_by (str):
        current_draft (int): The number of the latest draft.
        description (str):
        id (str): A generation id.
        updated_at (datetime.datetime):
        draft (DraftView): One draft: the IR and how it came about.
        history (list[DraftSummaryView]): Every draft, oldest first.
        name (None | str | Unset):
    """

    created_at: datetime.datetime
    created_by: str
    current_draft: int
    description: str
    id: str
    updated_at: datetime.datetime
    draft: DraftView
    history: list[DraftSummaryView]
    name: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        created_by = self.created_by

        current_draft = self.current_draft

        description = self.description

        id = self.id

        updated_at = self.updated_at.isoformat()

        draft = self.draft.to_dict()

        history = []
        for history_item_data in self.history:
            history_item = history_item_data.to_dict()
            history.append(history_item)

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "created_by": created_by,
                "current_draft": current_draft,
                "description": description,
                "id": id,
                "updated_at": updated_at,
                "draft": draft,
                "history": history,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.draft_summary_view import DraftSummaryView  # noqa: PLC0415
        from ..models.draft_view import DraftView  # noqa: PLC0415

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        created_by = d.pop("created_by")

        current_draft = d.pop("current_draft")

        description = d.pop("description")

        id = d.pop("id")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        draft = DraftView.from_dict(d.pop("draft"))

        history = []
        _history = d.pop("history")
        for history_item_data in _history:
            history_item = DraftSummaryView.from_dict(history_item_data)

            history.append(history_item)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        generation_detail = cls(
            created_at=created_at,
            created_by=created_by,
            current_draft=current_draft,
            description=description,
            id=id,
            updated_at=updated_at,
            draft=draft,
            history=history,
            name=name,
        )

        generation_detail.additional_properties = d
        return generation_detail

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
