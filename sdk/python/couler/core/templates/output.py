"""What a step returns: references to its outputs that later steps take as arguments."""

from __future__ import annotations

from couler.core.constants import STEP_RESULT
from couler.core.templates.artifact import Artifact


class Output:
    """An output of step `step_name` (of template `template_name`)."""

    def __init__(self, step_name: str, template_name: str):
        self.step_name = step_name
        self.template_name = template_name

    def reference(self, prefix: str) -> str:
        """The Argo expression, `prefix` being `steps` or `tasks`."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return "%s(%r)" % (type(self).__name__, self.reference("steps"))


class OutputScript(Output):
    """What the step printed (Argo's `outputs.result`)."""

    def reference(self, prefix: str) -> str:
        return "{{%s.%s.outputs.%s}}" % (prefix, self.step_name, STEP_RESULT)


class OutputParameter(Output):
    def __init__(self, step_name: str, template_name: str, name: str, is_global: bool = False):
        super().__init__(step_name, template_name)
        self.name = name
        self.is_global = is_global

    def reference(self, prefix: str) -> str:
        if self.is_global:
            return "{{workflow.outputs.parameters.%s}}" % self.name
        return "{{%s.%s.outputs.parameters.%s}}" % (prefix, self.step_name, self.name)


class OutputArtifact(Output):
    def __init__(self, step_name: str, template_name: str, artifact: Artifact):
        super().__init__(step_name, template_name)
        self.artifact = artifact
        self.path = artifact.path

    def reference(self, prefix: str) -> str:
        return "{{%s.%s.outputs.artifacts.%s}}" % (prefix, self.step_name, self.artifact.id)


class OutputJob(Output):
    """The Kubernetes object a resource step created: its uid, name and whole body."""

    def parameters(self) -> list[OutputParameter]:
        return [
            OutputParameter(self.step_name, self.template_name, name)
            for name in ("job-id", "job-name", "job-obj")
        ]

    def reference(self, prefix: str) -> str:
        return self.parameters()[0].reference(prefix)


def declared(outputs: list[Output] | None) -> list[Output]:
    """The outputs a step declared (not its printed result)."""
    return [output for output in outputs or [] if not isinstance(output, OutputScript)]
