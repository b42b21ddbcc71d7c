"""Files a step writes or reads: output parameters and stored artifacts."""

from __future__ import annotations

import hashlib
from collections import OrderedDict

from couler.core import utils
from couler.core.constants import ArtifactType
from couler.core.templates.secret import Secret


class Artifact:
    """A file at `path` in a step's container.

    A `parameters` artifact is an Argo output parameter read from the file
    (named `output-id-<line of the program that made it>`); the other types
    are Argo artifacts. `is_global` also publishes it as a workflow output.
    """

    def __init__(self, path: str, type: str | None = None, is_global: bool = False):
        self.path = path
        self.type = type or ArtifactType.LOCAL
        self.is_global = is_global
        if self.type == ArtifactType.PARAMETERS:
            self.id = "output-id-%d" % utils.user_line()
        else:
            self.id = "output-%s-%s" % (self.type, self._digest())
        self.name = self.id

    def _digest(self) -> str:
        parts = [self.path] + [str(part) for part in self._location()]
        return hashlib.md5("|".join(parts).encode("utf-8")).hexdigest()[:8]

    def _location(self) -> list[object]:
        return []

    @property
    def secret(self) -> Secret | None:
        """The credentials the artifact store needs, if any."""
        return None

    def to_dict(self) -> OrderedDict:
        """The artifact as a template's input or output."""
        if self.type == ArtifactType.PARAMETERS:
            artifact = OrderedDict([("name", self.id), ("valueFrom", {"path": self.path})])
        else:
            artifact = OrderedDict([("name", self.id), ("path", self.path)])
            store = self._store()
            if store is not None:
                artifact[self.type] = store
        if self.is_global:
            artifact["globalName"] = "global-" + self.id
        return artifact

    def _store(self) -> OrderedDict | None:
        return None


class LocalArtifact(Artifact):
    """An artifact kept in the workflow's default artifact repository."""

    def __init__(self, path: str, is_global: bool = False):
        super().__init__(path, ArtifactType.LOCAL, is_global)


class _BucketArtifact(Artifact):
    def __init__(
        self,
        type: str,
        path: str,
        accesskey_id: str | None,
        accesskey_secret: str | None,
        bucket: str | None,
        key: str | None,
        endpoint: str | None,
        is_global: bool,
    ):
        self.accesskey_id = accesskey_id
        self.accesskey_secret = accesskey_secret
        self.bucket = bucket
        self.key = key
        self.endpoint = endpoint
        super().__init__(path, type, is_global)

    def _location(self) -> list[object]:
        return [self.endpoint, self.bucket, self.key]

    @property
    def secret(self) -> Secret | None:
        if self.accesskey_id is None and self.accesskey_secret is None:
            return None
        return Secret(
            namespace="default",
            data={"accessKey": self.accesskey_id or "", "secretKey": self.accesskey_secret or ""},
            artifact_secret=True,
        )

    def _store(self) -> OrderedDict:
        store: OrderedDict = OrderedDict()
        if self.endpoint is not None:
            store["endpoint"] = self.endpoint
        if self.bucket is not None:
            store["bucket"] = self.bucket
        if self.key is not None:
            store["key"] = self.key
        self._extra(store)
        secret = self.secret
        if secret is not None:
            store["accessKeySecret"] = {"key": "accessKey", "name": secret.name}
            store["secretKeySecret"] = {"key": "secretKey", "name": secret.name}
        return store

    def _extra(self, store: OrderedDict) -> None:
        pass


class OssArtifact(_BucketArtifact):
    """An artifact in an Alibaba Cloud OSS bucket."""

    def __init__(
        self,
        path: str,
        accesskey_id: str | None,
        accesskey_secret: str | None,
        bucket: str | None,
        key: str | None = None,
        endpoint: str | None = None,
        is_global: bool = False,
    ):
        super().__init__(
            ArtifactType.OSS, path, accesskey_id, accesskey_secret, bucket, key, endpoint, is_global
        )


class S3Artifact(_BucketArtifact):
    """An artifact in an S3-compatible bucket."""

    def __init__(
        self,
        path: str,
        accesskey_id: str | None,
        accesskey_secret: str | None,
        bucket: str | None,
        key: str | None = None,
        endpoint: str | None = None,
        is_global: bool = False,
        insecure: bool = False,
    ):
        self.insecure = insecure
        super().__init__(
            ArtifactType.S3, path, accesskey_id, accesskey_secret, bucket, key, endpoint, is_global
        )

    def _extra(self, store: OrderedDict) -> None:
        store["insecure"] = self.insecure
