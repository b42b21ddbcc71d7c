"""Persistent volumes a workflow mounts into its steps."""

from __future__ import annotations

from collections import OrderedDict


class Volume:
    """An existing PersistentVolumeClaim, made available to the workflow's pods."""

    def __init__(self, name: str, claim_name: str):
        self.name = name
        self.claim_name = claim_name

    def to_dict(self) -> OrderedDict:
        return OrderedDict(
            [("name", self.name), ("persistentVolumeClaim", {"claimName": self.claim_name})]
        )


class VolumeMount:
    def __init__(self, name: str, mount_path: str):
        self.name = name
        self.mount_path = mount_path

    def to_dict(self) -> OrderedDict:
        return OrderedDict([("name", self.name), ("mountPath", self.mount_path)])
