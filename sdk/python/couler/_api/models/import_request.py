from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.import_format import check_import_format
from ..models.import_format import ImportFormat
from typing import cast

if TYPE_CHECKING:
    from ..models.import_request_source_type_0 import ImportRequestSourceType0
    from ..models.run_options import RunOptions


T = TypeVar("T", bound="ImportRequest")


@_attrs_define
class ImportRequest:
    """What to import, and what to do with the result.

    Attributes:
        source (ImportRequestSourceType0 | str): The manifest: a JSON object, or YAML (or JSON) text.
        accept_changes (bool | Unset): Import even when something that changes what runs cannot be carried
            over (each such item is still reported, with `changesRun: true`).
        format_ (ImportFormat | Unset): The engines Couler imports from.
        run (None | RunOptions | Unset):
        store (bool | Unset): Store the result as the tenant's workflow of that name (a new
            version when it exists and differs).
    """

    source: ImportRequestSourceType0 | str
    accept_changes: bool | Unset = UNSET
    format_: ImportFormat | Unset = UNSET
    run: None | RunOptions | Unset = UNSET
    store: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.import_request_source_type_0 import ImportRequestSourceType0  # noqa: PLC0415
        from ..models.run_options import RunOptions  # noqa: PLC0415

        source: dict[str, Any] | str
        if isinstance(self.source, ImportRequestSourceType0):
            source = self.source.to_dict()
        else:
            source = self.source

        accept_changes = self.accept_changes

        format_: str | Unset = UNSET
        if not isinstance(self.format_, Unset):
            format_ = self.format_

        run: dict[str, Any] | None | Unset
        if isinstance(self.run, Unset):
            run = UNSET
        elif isinstance(self.run, RunOptions):
            run = self.run.to_dict()
        else:
            run = self.run

        store = self.store

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "source": source,
            }
        )
        if accept_changes is not UNSET:
            field_dict["acceptChanges"] = accept_changes
        if format_ is not UNSET:
            field_dict["format"] = format_
        if run is not UNSET:
            field_dict["run"] = run
        if store is not UNSET:
            field_dict["store"] = store

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.import_request_source_type_0 import ImportRequestSourceType0  # noqa: PLC0415
        from ..models.run_options import RunOptions  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_source(data: object) -> ImportRequestSourceType0 | str:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                source_type_0 = ImportRequestSourceType0.from_dict(data)

                return source_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ImportRequestSourceType0 | str, data)

        source = _parse_source(d.pop("source"))

        accept_changes = d.pop("acceptChanges", UNSET)

        _format_ = d.pop("format", UNSET)
        format_: ImportFormat | Unset
        if isinstance(_format_, Unset):
            format_ = UNSET
        else:
            format_ = check_import_format(_format_)

        def _parse_run(data: object) -> None | RunOptions | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                run_type_0 = RunOptions.from_dict(data)

                return run_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RunOptions | Unset, data)

        run = _parse_run(d.pop("run", UNSET))

        store = d.pop("store", UNSET)

        import_request = cls(
            source=source,
            accept_changes=accept_changes,
            format_=format_,
            run=run,
            store=store,
        )

        return import_request
