"""A pod DNS configuration for every step of the workflow."""

from __future__ import annotations

from collections import OrderedDict


class DnsConfigOption:
    def __init__(self, name: str, value: str | None = None):
        self.name = name
        self.value = value

    def to_dict(self) -> OrderedDict:
        option = OrderedDict([("name", self.name)])
        if self.value is not None:
            option["value"] = self.value
        return option


class DnsConfig:
    def __init__(
        self,
        nameservers: list[str] | None = None,
        options: list[DnsConfigOption] | None = None,
        searches: list[str] | None = None,
    ):
        self.nameservers = nameservers or []
        self.options = options or []
        self.searches = searches or []

    def to_dict(self) -> OrderedDict:
        config: OrderedDict = OrderedDict()
        if self.nameservers:
            config["nameservers"] = list(self.nameservers)
        if self.options:
            config["options"] = [option.to_dict() for option in self.options]
        if self.searches:
            config["searches"] = list(self.searches)
        return config
