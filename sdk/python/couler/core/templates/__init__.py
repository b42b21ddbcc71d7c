"""The pieces an Argo workflow is made of."""

from couler.core.templates.artifact import (
    Artifact,
    LocalArtifact,
    OssArtifact,
    S3Artifact,
)
from couler.core.templates.cache import Cache
from couler.core.templates.output import (
    Output,
    OutputArtifact,
    OutputJob,
    OutputParameter,
    OutputScript,
)
from couler.core.templates.secret import Secret
from couler.core.templates.step import Step
from couler.core.templates.template import Template
from couler.core.templates.workflow import Workflow

__all__ = [
    "Artifact",
    "Cache",
    "LocalArtifact",
    "OssArtifact",
    "Output",
    "OutputArtifact",
    "OutputJob",
    "OutputParameter",
    "OutputScript",
    "S3Artifact",
    "Secret",
    "Step",
    "Template",
    "Workflow",
]
