"""Workflow-wide pod settings: volumes, DNS, tolerations, image pull secrets."""

from __future__ import annotations

from couler.core import states
from couler.core.templates.dns import DnsConfig
from couler.core.templates.image_pull_secret import ImagePullSecret
from couler.core.templates.toleration import Toleration
from couler.core.templates.volume import Volume
from couler.core.templates.volume_claim import VolumeClaimTemplate


def add_volume(volume: Volume) -> None:
    """Make an existing PersistentVolumeClaim available to steps' `volume_mounts`."""
    states.workflow.add_volume(volume)


def create_workflow_volume(volume_claim: VolumeClaimTemplate) -> None:
    """Create a PersistentVolumeClaim for each run, for steps' `volume_mounts`."""
    states.workflow.add_volume_claim(volume_claim)


def add_toleration(toleration: Toleration) -> None:
    states.workflow.tolerations.append(toleration)


def add_image_pull_secret(image_pull_secret: ImagePullSecret) -> None:
    states.workflow.image_pull_secrets.append(image_pull_secret)


def set_dns(dns_policy: str, dns_config: DnsConfig | None = None) -> None:
    states.workflow.dns_policy = dns_policy
    states.workflow.dns_config = dns_config
