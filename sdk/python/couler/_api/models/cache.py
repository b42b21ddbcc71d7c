from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.cache_policy_type_0 import CachePolicyType0
from ..models.cache_policy_type_0 import check_cache_policy_type_0
from ..models.cache_policy_type_1 import CachePolicyType1
from ..models.cache_policy_type_1 import check_cache_policy_type_1
from ..models.cache_scope_type_0 import CacheScopeType0
from ..models.cache_scope_type_0 import check_cache_scope_type_0
from ..models.cache_scope_type_1 import CacheScopeType1
from ..models.cache_scope_type_1 import check_cache_scope_type_1
from typing import cast


T = TypeVar("T", bound="Cache")


@_attrs_define
class Cache:
    """
    Attributes:
        policy (CachePolicyType0 | CachePolicyType1 | Unset):
        scope (CacheScopeType0 | CacheScopeType1 | Unset):
        ttl (int | None | str | Unset): How long an entry stays valid.
        version (None | str | Unset): Bump to invalidate earlier results of this step.
    """

    policy: CachePolicyType0 | CachePolicyType1 | Unset = UNSET
    scope: CacheScopeType0 | CacheScopeType1 | Unset = UNSET
    ttl: int | None | str | Unset = UNSET
    version: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        policy: str | Unset
        if isinstance(self.policy, Unset):
            policy = UNSET
        elif isinstance(self.policy, str):
            policy = self.policy
        else:
            policy = self.policy

        scope: str | Unset
        if isinstance(self.scope, Unset):
            scope = UNSET
        elif isinstance(self.scope, str):
            scope = self.scope
        else:
            scope = self.scope

        ttl: int | None | str | Unset
        if isinstance(self.ttl, Unset):
            ttl = UNSET
        else:
            ttl = self.ttl

        version: None | str | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if policy is not UNSET:
            field_dict["policy"] = policy
        if scope is not UNSET:
            field_dict["scope"] = scope
        if ttl is not UNSET:
            field_dict["ttl"] = ttl
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_policy(data: object) -> CachePolicyType0 | CachePolicyType1 | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                componentsschemas_cache_policy_type_0 = check_cache_policy_type_0(data)

                return componentsschemas_cache_policy_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, str):
                raise TypeError()
            componentsschemas_cache_policy_type_1 = check_cache_policy_type_1(data)

            return componentsschemas_cache_policy_type_1

        policy = _parse_policy(d.pop("policy", UNSET))

        def _parse_scope(data: object) -> CacheScopeType0 | CacheScopeType1 | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                componentsschemas_cache_scope_type_0 = check_cache_scope_type_0(data)

                return componentsschemas_cache_scope_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, str):
                raise TypeError()
            componentsschemas_cache_scope_type_1 = check_cache_scope_type_1(data)

            return componentsschemas_cache_scope_type_1

        scope = _parse_scope(d.pop("scope", UNSET))

        def _parse_ttl(data: object) -> int | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | str | Unset, data)

        ttl = _parse_ttl(d.pop("ttl", UNSET))

        def _parse_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        cache = cls(
            policy=policy,
            scope=scope,
            ttl=ttl,
            version=version,
        )

        return cache
