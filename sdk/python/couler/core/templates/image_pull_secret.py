"""A registry credential (a Kubernetes secret) the workflow's pods pull images with."""

from __future__ import annotations


class ImagePullSecret:
    def __init__(self, name: str):
        self.name = name

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name}
