"""One use of a template in the workflow: an Argo step, or a DAG task."""

from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, field


@dataclass
class Step:
    name: str
    template: str
    arguments: OrderedDict | None = None
    when: str | None = None
    with_items: list | None = None
    dependencies: list[str] | None = None
    depends: str | None = None
    # The dependency on the step a `when` tests was added after the step was
    # made, so it comes last in the task.
    conditional: bool = False
    outputs: list = field(default_factory=list, compare=False, repr=False)

    def to_step_dict(self) -> OrderedDict:
        step = OrderedDict([("name", self.name), ("template", self.template)])
        if self.when is not None:
            step["when"] = self.when
        self._add_arguments(step)
        return step

    def to_task_dict(self) -> OrderedDict:
        task = OrderedDict([("name", self.name)])
        if not self.conditional:
            self._add_dependencies(task)
        task["template"] = self.template
        if self.when is not None:
            task["when"] = self.when
        self._add_arguments(task)
        if self.conditional:
            self._add_dependencies(task)
        return task

    def _add_dependencies(self, task: OrderedDict) -> None:
        if self.dependencies:
            task["dependencies"] = list(self.dependencies)
        elif self.depends:
            task["depends"] = self.depends

    def _add_arguments(self, step: OrderedDict) -> None:
        if self.arguments:
            step["arguments"] = copy.deepcopy(self.arguments)
        if self.with_items is not None:
            step["withItems"] = copy.deepcopy(self.with_items)
