"""A PersistentVolumeClaim created for each run of the workflow."""

from __future__ import annotations

from collections import OrderedDict


class VolumeClaimTemplate:
    def __init__(self, claim_name: str, access_modes: list[str] | None = None, size: str = "1Gi"):
        self.claim_name = claim_name
        self.access_modes = access_modes or ["ReadWriteOnce"]
        self.size = size

    def to_dict(self) -> OrderedDict:
        return OrderedDict(
            [
                ("metadata", {"name": self.claim_name}),
                (
                    "spec",
                    OrderedDict(
                        [
                            ("accessModes", list(self.access_modes)),
                            ("resources", {"requests": {"storage": self.size}}),
                        ]
                    ),
                ),
            ]
        )
