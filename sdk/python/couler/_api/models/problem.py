from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.problem_item import ProblemItem


T = TypeVar("T", bound="Problem")


@_attrs_define
class Problem:
    """The problem document every error response carries.

    Attributes:
        code (str): Stable machine code, e.g. `validation_failed`, `not_found`.
        detail (str):
        status (int):
        title (str):
        type_ (str): A URI naming the problem type.
        path (None | str | Unset): JSON pointer into the request of what is wrong.
        problems (list[ProblemItem] | Unset): Every problem found, for validation failures.
        request_id (None | str | Unset): The id of the request, as in the `x-request-id` header.
    """

    code: str
    detail: str
    status: int
    title: str
    type_: str
    path: None | str | Unset = UNSET
    problems: list[ProblemItem] | Unset = UNSET
    request_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        detail = self.detail

        status = self.status

        title = self.title

        type_ = self.type_

        path: None | str | Unset
        if isinstance(self.path, Unset):
            path = UNSET
        else:
            path = self.path

        problems: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.problems, Unset):
            problems = []
            for problems_item_data in self.problems:
                problems_item = problems_item_data.to_dict()
                problems.append(problems_item)

        request_id: None | str | Unset
        if isinstance(self.request_id, Unset):
            request_id = UNSET
        else:
            request_id = self.request_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "detail": detail,
                "status": status,
                "title": title,
                "type": type_,
            }
        )
        if path is not UNSET:
            field_dict["path"] = path
        if problems is not UNSET:
            field_dict["problems"] = problems
        if request_id is not UNSET:
            field_dict["request_id"] = request_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.problem_item import ProblemItem  # noqa: PLC0415

        d = dict(src_dict)
        code = d.pop("code")

        detail = d.pop("detail")

        status = d.pop("status")

        title = d.pop("title")

        type_ = d.pop("type")

        def _parse_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        path = _parse_path(d.pop("path", UNSET))

        _problems = d.pop("problems", UNSET)
        problems: list[ProblemItem] | Unset = UNSET
        if _problems is not UNSET:
            problems = []
            for problems_item_data in _problems:
                problems_item = ProblemItem.from_dict(problems_item_data)

                problems.append(problems_item)

        def _parse_request_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        request_id = _parse_request_id(d.pop("request_id", UNSET))

        problem = cls(
            code=code,
            detail=detail,
            status=status,
            title=title,
            type_=type_,
            path=path,
            problems=problems,
            request_id=request_id,
        )

        problem.additional_properties = d
        return problem

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
