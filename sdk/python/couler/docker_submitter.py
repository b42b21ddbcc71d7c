"""Runs one container on the local Docker daemon, as the Couler SDK's DockerSubmitter does."""

from __future__ import annotations

from types import ModuleType
from typing import Any


def _import_docker() -> ModuleType:
    try:
        import docker
    except ImportError:
        raise RuntimeError(
            "DockerSubmitter needs the 'docker' package (pip install 'couler-sdk[docker]') "
            "and a Docker daemon"
        ) from None
    return docker


class DockerSubmitter:
    @staticmethod
    def run_docker_container(image: str, command: str | list[str] | None = None) -> Any:
        """Run `image` to completion and return what it printed."""
        client = _import_docker().from_env()
        return client.containers.run(image, command, remove=True)
