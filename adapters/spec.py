"""The reward spec: one YAML/dict shape that every trainer adapter (TRL, verl, the mini trainer) reads.

A spec lists reward terms. Each term names a registered reward with its config and a weight; it may be
gated by another reward (the term counts only when the gate passes). Routing by task is the registered
``route`` reward used as a term. Example::

    rewards:
      - name: math_equivalence
        weight: 1.0
        gate: think_format          # correctness counts only inside the expected format
      - name: think_format
        weight: 0.2
    async: false

Validation builds every reward once, so a typo fails when the spec is loaded, not mid-training.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

import rewardkit.adapters.demo.tasks  # noqa: F401  (registers the toy tasks' reward, character_share)
from rewardkit.compose import Gate, WeightedSum, build_reward
from rewardkit.reward import ConfigError, Reward


class RewardTerm(BaseModel):
    """One term of the spec: ``weight * reward`` (optionally behind a gate). Numbers must be finite."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(description="registered reward name (`rewardkit rewards list`)")
    config: dict[str, Any] = Field(default_factory=dict, description="the reward's config")
    weight: float = Field(1.0, description="weight in the trainer's weighted sum")
    gate: str | dict[str, Any] | None = Field(None, description="reward spec that must pass for this term to count")
    gate_threshold: float = Field(1.0, description="gate passes when its score >= this")
    gate_otherwise: float | None = Field(0.0, description="score of this term when the gate fails")
    label: str | None = Field(None, description="logged name (default: the reward's name)")

    def build(self) -> Reward:
        """The reward of this term (without its weight)."""
        inner = build_reward({"name": self.name, "config": self.config})
        if self.gate is None:
            if self.label:
                inner.__name__ = self.label
            return inner
        return Gate(
            reward=inner,
            gate=self.gate,
            threshold=self.gate_threshold,
            otherwise=self.gate_otherwise,
            name=self.label or f"{self.name}_if_{_spec_name(self.gate)}",
        )


class RewardSpec(BaseModel):
    """A list of weighted reward terms, validated by building each reward once."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    rewards: list[RewardTerm] = Field(min_length=1)
    use_async: bool = Field(False, alias="async", description="give TRL async callables (scored concurrently)")

    @field_validator("rewards", mode="before")
    @classmethod
    def _names_as_terms(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _buildable(self) -> RewardSpec:
        names = [term.build().__name__ for term in self.rewards]
        for name in dict.fromkeys(names):
            terms = [i for i, n in enumerate(names) if n == name]
            if len(terms) > 1:
                raise ValueError(
                    f"{', '.join(f'rewards.{i}' for i in terms)} are all logged as {name!r}, so TRL's "
                    f"rewards/{name}/mean and {name}_reason would mix them; give all but one a distinct 'label'"
                )
        return self

    # -- builders ----------------------------------------------------------------------------------
    def reward_funcs(self) -> list[Any]:
        """One callable per term, in order (the ``reward_funcs`` TRL's ``GRPOTrainer`` takes)."""
        built = [term.build() for term in self.rewards]
        return [r.as_async() for r in built] if self.use_async else built

    def reward_weights(self) -> list[float]:
        """Weights aligned with :meth:`reward_funcs` (``GRPOConfig.reward_weights``)."""
        return [term.weight for term in self.rewards]

    def combined(self) -> Reward:
        """All terms as one reward (``sum_i w_i r_i`` over the terms that scored), for verl and the mini trainer."""
        built = [term.build() for term in self.rewards]
        if len(built) == 1 and self.rewards[0].weight == 1.0:
            return built[0]
        return WeightedSum(rewards=built, weights=self.reward_weights())


def load_spec(source: RewardSpec | Mapping[str, Any] | list[Any] | str | Path) -> RewardSpec:
    """A :class:`RewardSpec` from a spec, a dict, a bare list of terms, or a YAML/JSON file path.

    >>> load_spec(["think_format", {"name": "tag_count", "weight": 0.5}]).reward_weights()
    [1.0, 0.5]
    """
    if isinstance(source, RewardSpec):
        return source
    if isinstance(source, (str, Path)):
        import yaml

        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"no such reward spec file: {path}")
        source = yaml.safe_load(path.read_text())
    if isinstance(source, list):
        source = {"rewards": source}
    if not isinstance(source, Mapping):
        raise ConfigError(f"a reward spec is a mapping with 'rewards', got {type(source).__name__}")
    try:
        return RewardSpec.model_validate(dict(source))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<spec>'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid reward spec: {problems}") from None


def _spec_name(spec: Any) -> str:
    if isinstance(spec, str):
        return spec
    if isinstance(spec, Mapping):
        return str(spec.get("name", "gate"))
    return getattr(spec, "__name__", "gate")
