"""An Argo template: what one kind of step runs."""

from __future__ import annotations

import copy
from collections import OrderedDict


class Template:
    """A named Argo template, kept as the mapping it renders to.

    `pod` tells whether the template runs a pod of its own (container, script
    and resource templates do; steps templates do not), which is what a
    cluster config's `config_pod` hook is applied to.
    """

    def __init__(self, name: str, body: OrderedDict, pod: bool = True):
        self.name = name
        self._body = body
        self.pod = pod

    def to_dict(self) -> OrderedDict:
        return copy.deepcopy(self._body)
