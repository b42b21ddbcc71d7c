from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
    from ..models.cache import Cache
    from ..models.condition import Condition
    from ..models.container import Container
    from ..models.hints import Hints
    from ..models.inputs import Inputs
    from ..models.map_over import MapOver
    from ..models.outputs import Outputs
    from ..models.resources import Resources
    from ..models.retry import Retry
    from ..models.script import Script
    from ..models.training_job import TrainingJob
    from ..models.tune import Tune
    from ..models.while_loop import WhileLoop


T = TypeVar("T", bound="TemplateStep")


@_attrs_define
class TemplateStep:
    """An IR step without its `name` (the planner names each step it places).

    Attributes:
        cache (Cache | None | Unset):
        container (Container | None | Unset): Run a container.
        depends (list[str] | Unset): What must hold of earlier steps for this one to run; all entries
            must hold. An entry is a step or group name, which must have
            succeeded (a cache hit counts), or an expression:
            `expr := and ('||' and)*`, `and := unary ('&&' unary)*`,
            `unary := '!' unary | '(' expr ')' | NAME ('.' OUTCOME)?`, with
            OUTCOME one of `succeeded`, `failed`, `skipped`, `any` (ended
            whatever the outcome), e.g. `a && (c.succeeded || c.failed)`. A
            group can only be named bare. The step waits until every step an
            entry names has ended, then is skipped (with the entry as reason)
            if an entry is false. A failed step fails the run unless a step that
            ran depends on it, directly or through steps that did not run (a
            handled failure). References to outputs add dependencies that must
            succeed, unless an entry names the step.
        description (None | str | Unset):
        hints (Hints | None | Unset): Opaque scheduling hints passed to engines that understand them.
        inputs (Inputs | None | Unset):
        job (None | TrainingJob | Unset): Run a distributed training job.
        map_ (MapOver | None | Unset): Fan out: one instance per item, each seeing `{{item}}`.
        outputs (None | Outputs | Unset):
        resources (None | Resources | Unset):
        retry (None | Retry | Unset):
        script (None | Script | Unset): Run inline source with an interpreter.
        timeout (int | None | str | Unset): Fail the step (killing it) after this long.
        tune (None | Tune | Unset): Hyperparameter search: the step becomes one trial per configuration.
        when (list[Condition] | Unset): Run only if every condition holds; otherwise the step is skipped.
        while_ (None | Unset | WhileLoop): Repeat the step while its own outputs satisfy a condition.
    """

    cache: Cache | None | Unset = UNSET
    container: Container | None | Unset = UNSET
    depends: list[str] | Unset = UNSET
    description: None | str | Unset = UNSET
    hints: Hints | None | Unset = UNSET
    inputs: Inputs | None | Unset = UNSET
    job: None | TrainingJob | Unset = UNSET
    map_: MapOver | None | Unset = UNSET
    outputs: None | Outputs | Unset = UNSET
    resources: None | Resources | Unset = UNSET
    retry: None | Retry | Unset = UNSET
    script: None | Script | Unset = UNSET
    timeout: int | None | str | Unset = UNSET
    tune: None | Tune | Unset = UNSET
    when: list[Condition] | Unset = UNSET
    while_: None | Unset | WhileLoop = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.cache import Cache  # noqa: PLC0415
        from ..models.container import Container  # noqa: PLC0415
        from ..models.hints import Hints  # noqa: PLC0415
        from ..models.inputs import Inputs  # noqa: PLC0415
        from ..models.map_over import MapOver  # noqa: PLC0415
        from ..models.outputs import Outputs  # noqa: PLC0415
        from ..models.resources import Resources  # noqa: PLC0415
        from ..models.retry import Retry  # noqa: PLC0415
        from ..models.script import Script  # noqa: PLC0415
        from ..models.training_job import TrainingJob  # noqa: PLC0415
        from ..models.tune import Tune  # noqa: PLC0415
        from ..models.while_loop import WhileLoop  # noqa: PLC0415

        cache: dict[str, Any] | None | Unset
        if isinstance(self.cache, Unset):
            cache = UNSET
        elif isinstance(self.cache, Cache):
            cache = self.cache.to_dict()
        else:
            cache = self.cache

        container: dict[str, Any] | None | Unset
        if isinstance(self.container, Unset):
            container = UNSET
        elif isinstance(self.container, Container):
            container = self.container.to_dict()
        else:
            container = self.container

        depends: list[str] | Unset = UNSET
        if not isinstance(self.depends, Unset):
            depends = self.depends

        description: None | str | Unset
        if isinstance(self.description, Unset):
            description = UNSET
        else:
            description = self.description

        hints: dict[str, Any] | None | Unset
        if isinstance(self.hints, Unset):
            hints = UNSET
        elif isinstance(self.hints, Hints):
            hints = self.hints.to_dict()
        else:
            hints = self.hints

        inputs: dict[str, Any] | None | Unset
        if isinstance(self.inputs, Unset):
            inputs = UNSET
        elif isinstance(self.inputs, Inputs):
            inputs = self.inputs.to_dict()
        else:
            inputs = self.inputs

        job: dict[str, Any] | None | Unset
        if isinstance(self.job, Unset):
            job = UNSET
        elif isinstance(self.job, TrainingJob):
            job = self.job.to_dict()
        else:
            job = self.job

        map_: dict[str, Any] | None | Unset
        if isinstance(self.map_, Unset):
            map_ = UNSET
        elif isinstance(self.map_, MapOver):
            map_ = self.map_.to_dict()
        else:
            map_ = self.map_

        outputs: dict[str, Any] | None | Unset
        if isinstance(self.outputs, Unset):
            outputs = UNSET
        elif isinstance(self.outputs, Outputs):
            outputs = self.outputs.to_dict()
        else:
            outputs = self.outputs

        resources: dict[str, Any] | None | Unset
        if isinstance(self.resources, Unset):
            resources = UNSET
        elif isinstance(self.resources, Resources):
            resources = self.resources.to_dict()
        else:
            resources = self.resources

        retry: dict[str, Any] | None | Unset
        if isinstance(self.retry, Unset):
            retry = UNSET
        elif isinstance(self.retry, Retry):
            retry = self.retry.to_dict()
        else:
            retry = self.retry

        script: dict[str, Any] | None | Unset
        if isinstance(self.script, Unset):
            script = UNSET
        elif isinstance(self.script, Script):
            script = self.script.to_dict()
        else:
            script = self.script

        timeout: int | None | str | Unset
        if isinstance(self.timeout, Unset):
            timeout = UNSET
        else:
            timeout = self.timeout

        tune: dict[str, Any] | None | Unset
        if isinstance(self.tune, Unset):
            tune = UNSET
        elif isinstance(self.tune, Tune):
            tune = self.tune.to_dict()
        else:
            tune = self.tune

        when: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.when, Unset):
            when = []
            for when_item_data in self.when:
                when_item = when_item_data.to_dict()
                when.append(when_item)

        while_: dict[str, Any] | None | Unset
        if isinstance(self.while_, Unset):
            while_ = UNSET
        elif isinstance(self.while_, WhileLoop):
            while_ = self.while_.to_dict()
        else:
            while_ = self.while_

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if cache is not UNSET:
            field_dict["cache"] = cache
        if container is not UNSET:
            field_dict["container"] = container
        if depends is not UNSET:
            field_dict["depends"] = depends
        if description is not UNSET:
            field_dict["description"] = description
        if hints is not UNSET:
            field_dict["hints"] = hints
        if inputs is not UNSET:
            field_dict["inputs"] = inputs
        if job is not UNSET:
            field_dict["job"] = job
        if map_ is not UNSET:
            field_dict["map"] = map_
        if outputs is not UNSET:
            field_dict["outputs"] = outputs
        if resources is not UNSET:
            field_dict["resources"] = resources
        if retry is not UNSET:
            field_dict["retry"] = retry
        if script is not UNSET:
            field_dict["script"] = script
        if timeout is not UNSET:
            field_dict["timeout"] = timeout
        if tune is not UNSET:
            field_dict["tune"] = tune
        if when is not UNSET:
            field_dict["when"] = when
        if while_ is not UNSET:
            field_dict["while"] = while_

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.cache import Cache  # noqa: PLC0415
        from ..models.condition import Condition  # noqa: PLC0415
        from ..models.container import Container  # noqa: PLC0415
        from ..models.hints import Hints  # noqa: PLC0415
        from ..models.inputs import Inputs  # noqa: PLC0415
        from ..models.map_over import MapOver  # noqa: PLC0415
        from ..models.outputs import Outputs  # noqa: PLC0415
        from ..models.resources import Resources  # noqa: PLC0415
        from ..models.retry import Retry  # noqa: PLC0415
        from ..models.script import Script  # noqa: PLC0415
        from ..models.training_job import TrainingJob  # noqa: PLC0415
        from ..models.tune import Tune  # noqa: PLC0415
        from ..models.while_loop import WhileLoop  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_cache(data: object) -> Cache | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                cache_type_0 = Cache.from_dict(data)

                return cache_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Cache | None | Unset, data)

        cache = _parse_cache(d.pop("cache", UNSET))

        def _parse_container(data: object) -> Container | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                container_type_0 = Container.from_dict(data)

                return container_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Container | None | Unset, data)

        container = _parse_container(d.pop("container", UNSET))

        depends = cast(list[str], d.pop("depends", UNSET))

        def _parse_description(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        description = _parse_description(d.pop("description", UNSET))

        def _parse_hints(data: object) -> Hints | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                hints_type_0 = Hints.from_dict(data)

                return hints_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Hints | None | Unset, data)

        hints = _parse_hints(d.pop("hints", UNSET))

        def _parse_inputs(data: object) -> Inputs | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                inputs_type_0 = Inputs.from_dict(data)

                return inputs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Inputs | None | Unset, data)

        inputs = _parse_inputs(d.pop("inputs", UNSET))

        def _parse_job(data: object) -> None | TrainingJob | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                job_type_0 = TrainingJob.from_dict(data)

                return job_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TrainingJob | Unset, data)

        job = _parse_job(d.pop("job", UNSET))

        def _parse_map_(data: object) -> MapOver | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                map_type_0 = MapOver.from_dict(data)

                return map_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(MapOver | None | Unset, data)

        map_ = _parse_map_(d.pop("map", UNSET))

        def _parse_outputs(data: object) -> None | Outputs | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                outputs_type_0 = Outputs.from_dict(data)

                return outputs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Outputs | Unset, data)

        outputs = _parse_outputs(d.pop("outputs", UNSET))

        def _parse_resources(data: object) -> None | Resources | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                resources_type_0 = Resources.from_dict(data)

                return resources_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Resources | Unset, data)

        resources = _parse_resources(d.pop("resources", UNSET))

        def _parse_retry(data: object) -> None | Retry | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                retry_type_0 = Retry.from_dict(data)

                return retry_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Retry | Unset, data)

        retry = _parse_retry(d.pop("retry", UNSET))

        def _parse_script(data: object) -> None | Script | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                script_type_0 = Script.from_dict(data)

                return script_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Script | Unset, data)

        script = _parse_script(d.pop("script", UNSET))

        def _parse_timeout(data: object) -> int | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | str | Unset, data)

        timeout = _parse_timeout(d.pop("timeout", UNSET))

        def _parse_tune(data: object) -> None | Tune | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                tune_type_0 = Tune.from_dict(data)

                return tune_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Tune | Unset, data)

        tune = _parse_tune(d.pop("tune", UNSET))

        _when = d.pop("when", UNSET)
        when: list[Condition] | Unset = UNSET
        if _when is not UNSET:
            when = []
            for when_item_data in _when:
                when_item = Condition.from_dict(when_item_data)

                when.append(when_item)

        def _parse_while_(data: object) -> None | Unset | WhileLoop:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                while_type_0 = WhileLoop.from_dict(data)

                return while_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | WhileLoop, data)

        while_ = _parse_while_(d.pop("while", UNSET))

        template_step = cls(
            cache=cache,
            container=container,
            depends=depends,
            description=description,
            hints=hints,
            inputs=inputs,
            job=job,
            map_=map_,
            outputs=outputs,
            resources=resources,
            retry=retry,
            script=script,
            timeout=timeout,
            tune=tune,
            when=when,
            while_=while_,
        )

        return template_step
