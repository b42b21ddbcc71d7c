"""Argo memoization of a step's outputs."""

from __future__ import annotations

from collections import OrderedDict


class Cache:
    """Reuse a step's outputs saved under `key` in config map `name` for `max_age`."""

    def __init__(self, name: str, key: str, max_age: str = ""):
        self.name = name
        self.key = key
        self.max_age = max_age

    def to_dict(self) -> OrderedDict:
        return OrderedDict(
            [
                ("key", self.key),
                ("maxAge", self.max_age),
                ("cache", {"configMap": {"name": self.name}}),
            ]
        )
