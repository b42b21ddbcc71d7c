from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, TYPE_CHECKING

from attrs import define as _attrs_define

from ..types import UNSET, Unset

from ..models.strategy_type_0 import check_strategy_type_0
from ..models.strategy_type_0 import StrategyType0
from ..models.strategy_type_1 import check_strategy_type_1
from ..models.strategy_type_1 import StrategyType1
from ..models.strategy_type_2 import check_strategy_type_2
from ..models.strategy_type_2 import StrategyType2
from typing import cast

if TYPE_CHECKING:
    from ..models.data_card import DataCard
    from ..models.halving import Halving
    from ..models.model_card import ModelCard
    from ..models.objective import Objective
    from ..models.tune_space import TuneSpace


T = TypeVar("T", bound="Tune")


@_attrs_define
class Tune:
    """A hyperparameter search over the step.

    Attributes:
        max_trials (int):
        objective (Objective):
        space (TuneSpace): Hyperparameters by name, referenced as `{{trial.parameters.NAME}}`.
        data_card (DataCard | None | Unset):
        halving (Halving | None | Unset): Successive-halving budgets; the budget is `{{trial.budget}}`.
        model_card (ModelCard | None | Unset):
        parallelism (int | None | Unset): Trials at once.
        seed (int | None | Unset): Seed for `random` (and the fallback of `llm`), for reproducible searches.
        strategy (StrategyType0 | StrategyType1 | StrategyType2 | Unset):
    """

    max_trials: int
    objective: Objective
    space: TuneSpace
    data_card: DataCard | None | Unset = UNSET
    halving: Halving | None | Unset = UNSET
    model_card: ModelCard | None | Unset = UNSET
    parallelism: int | None | Unset = UNSET
    seed: int | None | Unset = UNSET
    strategy: StrategyType0 | StrategyType1 | StrategyType2 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.data_card import DataCard  # noqa: PLC0415
        from ..models.halving import Halving  # noqa: PLC0415
        from ..models.model_card import ModelCard  # noqa: PLC0415

        max_trials = self.max_trials

        objective = self.objective.to_dict()

        space = self.space.to_dict()

        data_card: dict[str, Any] | None | Unset
        if isinstance(self.data_card, Unset):
            data_card = UNSET
        elif isinstance(self.data_card, DataCard):
            data_card = self.data_card.to_dict()
        else:
            data_card = self.data_card

        halving: dict[str, Any] | None | Unset
        if isinstance(self.halving, Unset):
            halving = UNSET
        elif isinstance(self.halving, Halving):
            halving = self.halving.to_dict()
        else:
            halving = self.halving

        model_card: dict[str, Any] | None | Unset
        if isinstance(self.model_card, Unset):
            model_card = UNSET
        elif isinstance(self.model_card, ModelCard):
            model_card = self.model_card.to_dict()
        else:
            model_card = self.model_card

        parallelism: int | None | Unset
        if isinstance(self.parallelism, Unset):
            parallelism = UNSET
        else:
            parallelism = self.parallelism

        seed: int | None | Unset
        if isinstance(self.seed, Unset):
            seed = UNSET
        else:
            seed = self.seed

        strategy: str | Unset
        if isinstance(self.strategy, Unset):
            strategy = UNSET
        elif isinstance(self.strategy, str):
            strategy = self.strategy
        elif isinstance(self.strategy, str):
            strategy = self.strategy
        else:
            strategy = self.strategy

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "maxTrials": max_trials,
                "objective": objective,
                "space": space,
            }
        )
        if data_card is not UNSET:
            field_dict["dataCard"] = data_card
        if halving is not UNSET:
            field_dict["halving"] = halving
        if model_card is not UNSET:
            field_dict["modelCard"] = model_card
        if parallelism is not UNSET:
            field_dict["parallelism"] = parallelism
        if seed is not UNSET:
            field_dict["seed"] = seed
        if strategy is not UNSET:
            field_dict["strategy"] = strategy

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.data_card import DataCard  # noqa: PLC0415
        from ..models.halving import Halving  # noqa: PLC0415
        from ..models.model_card import ModelCard  # noqa: PLC0415
        from ..models.objective import Objective  # noqa: PLC0415
        from ..models.tune_space import TuneSpace  # noqa: PLC0415

        d = dict(src_dict)
        max_trials = d.pop("maxTrials")

        objective = Objective.from_dict(d.pop("objective"))

        space = TuneSpace.from_dict(d.pop("space"))

        def _parse_data_card(data: object) -> DataCard | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                data_card_type_0 = DataCard.from_dict(data)

                return data_card_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DataCard | None | Unset, data)

        data_card = _parse_data_card(d.pop("dataCard", UNSET))

        def _parse_halving(data: object) -> Halving | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                halving_type_0 = Halving.from_dict(data)

                return halving_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Halving | None | Unset, data)

        halving = _parse_halving(d.pop("halving", UNSET))

        def _parse_model_card(data: object) -> ModelCard | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                model_card_type_0 = ModelCard.from_dict(data)

                return model_card_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ModelCard | None | Unset, data)

        model_card = _parse_model_card(d.pop("modelCard", UNSET))

        def _parse_parallelism(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        parallelism = _parse_parallelism(d.pop("parallelism", UNSET))

        def _parse_seed(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        seed = _parse_seed(d.pop("seed", UNSET))

        def _parse_strategy(
            data: object,
        ) -> StrategyType0 | StrategyType1 | StrategyType2 | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                componentsschemas_strategy_type_0 = check_strategy_type_0(data)

                return componentsschemas_strategy_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                componentsschemas_strategy_type_1 = check_strategy_type_1(data)

                return componentsschemas_strategy_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, str):
                raise TypeError()
            componentsschemas_strategy_type_2 = check_strategy_type_2(data)

            return componentsschemas_strategy_type_2

        strategy = _parse_strategy(d.pop("strategy", UNSET))

        tune = cls(
            max_trials=max_trials,
            objective=objective,
            space=space,
            data_card=data_card,
            halving=halving,
            model_card=model_card,
            parallelism=parallelism,
            seed=seed,
            strategy=strategy,
        )

        return tune
