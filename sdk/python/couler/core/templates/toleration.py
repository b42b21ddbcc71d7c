"""A node taint that every step of the workflow tolerates."""

from __future__ import annotations

from collections import OrderedDict


class Toleration:
    def __init__(self, key: str, effect: str, operator: str):
        self.key = key
        self.effect = effect
        self.operator = operator

    def to_dict(self) -> OrderedDict:
        return OrderedDict(
            [("key", self.key), ("effect", self.effect), ("operator", self.operator)]
        )
