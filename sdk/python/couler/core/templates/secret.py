"""Kubernetes secrets the workflow's steps read as environment variables."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping

from couler.core import utils


class Secret:
    """A named set of key → value pairs.

    Without a name, the name is `couler-<md5 of the data>`, so the same data
    always gives the same secret. `use_existing` refers to a secret that is
    already there (only its keys are known); `dry_run` secrets are referenced
    but never created; `artifact_secret` marks the credentials of an artifact
    store.
    """

    def __init__(
        self,
        namespace: str,
        data: Mapping[str, str],
        name: str | None = None,
        dry_run: bool = False,
        use_existing: bool = False,
        artifact_secret: bool = False,
    ):
        if not isinstance(data, Mapping):
            raise TypeError("secret data must be a dict")
        self.namespace = namespace
        self.data = dict(data)
        self.name = name or "couler-" + hashlib.md5(
            json.dumps(self.data, sort_keys=True).encode("utf-8")
        ).hexdigest()
        self.dry_run = dry_run
        self.use_existing = use_existing
        self.artifact_secret = artifact_secret

    def to_yaml(self) -> OrderedDict:
        """The Kubernetes Secret manifest, values base64-encoded."""
        return OrderedDict(
            [
                ("apiVersion", "v1"),
                ("kind", "Secret"),
                ("metadata", {"name": self.name, "namespace": self.namespace}),
                ("type", "Opaque"),
                (
                    "data",
                    OrderedDict(
                        (key, utils.encode_base64(str(value))) for key, value in self.data.items()
                    ),
                ),
            ]
        )

    def to_env_list(self) -> list[dict]:
        """One env var per key, read from this secret."""
        return [
            {
                "name": key,
                "valueFrom": {"secretKeyRef": {"key": key, "name": self.name}},
            }
            for key in self.data
        ]
