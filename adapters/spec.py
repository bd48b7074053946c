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

A term is :class:`rewardsmith.compose.RewardTerm`, the same grammar ``weighted_sum``/``gate``/``route`` read; it may
also carry the adapter options (:mod:`rewardsmith.adapters.options`: ``answer_column``, ``label_column``,
``whole_batch``, ``unscorable_score``), which are validated here and read by the adapters that use them.
Validation builds every reward once, so a typo fails when the spec is loaded, not mid-training, and the
trainer gets those same instances.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rewardsmith.adapters.options import options_of, split_options
from rewardsmith.compose import RewardTerm, WeightedSum
from rewardsmith.reward import ConfigError, Reward


class RewardSpec(BaseModel):
    """A list of weighted reward terms, validated by building each reward once."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    rewards: list[RewardTerm] = Field(min_length=1)
    use_async: bool = Field(False, alias="async", description="give TRL async callables (scored concurrently)")

    @field_validator("rewards", mode="before")
    @classmethod
    def _names_as_terms(cls, value: Any) -> Any:
        """Names as terms; a term's adapter options checked and set aside (TRL takes ``None`` as it is, so it reads
        none of them, and a spec file shared with verifiers or ``rewardsmith serve`` still loads)."""
        if not isinstance(value, list):
            return value
        terms = []
        for index, entry in enumerate(value):
            where = f"term {index}"
            term, options = split_options({"name": entry} if isinstance(entry, str) else entry, where)
            options_of(options, where)
            terms.append(term)
        return terms

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


def load_spec(
    source: RewardSpec | Mapping[str, Any] | list[Any] | str | Path,
    *,
    base_dir: str | Path | None = None,
    allow_imports: bool = False,
) -> RewardSpec:
    """A :class:`RewardSpec` from a spec, a dict, a bare list of terms, or a YAML/JSON file path.

    A file is untrusted (:mod:`rewardsmith.spec_files`): its file references (``template:``, ``*_file:``) must stay
    inside its own folder, and it may not make the loader import a module (``pydantic_model: "pkg.mod:Model"``)
    unless that module is already imported or ``allow_imports=True``. Both are checked on the whole document before
    any reward is built. A dict or list given in code is the caller's own and is taken as it is, unless
    ``base_dir`` says which folder it came from (then it is checked like a file from there).

    >>> load_spec(["think_format", {"name": "tag_count", "weight": 0.5}]).reward_weights()
    [1.0, 0.5]
    """
    if isinstance(source, RewardSpec):
        return source
    label = "reward spec"
    if isinstance(source, (str, Path)):
        from rewardsmith.spec_files import read_spec_file

        label = str(source)
        source = read_spec_file(source, allow_imports=allow_imports)
    elif base_dir is not None:
        from rewardsmith.spec_files import confine_spec

        source = confine_spec(source, base_dir, source=label, allow_imports=allow_imports)
    if isinstance(source, list):
        source = {"rewards": source}
    if not isinstance(source, Mapping):
        raise ConfigError(f"{label}: a reward spec is a mapping with 'rewards', got {type(source).__name__}")
    try:
        return RewardSpec.model_validate(dict(source))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<spec>'}: {str(err['msg']).removeprefix('Value error, ')}"
            for err in exc.errors()
        )
        prefix = f"{label}: " if label != "reward spec" else ""
        raise ConfigError(f"{prefix}invalid reward spec: {problems}") from None


__all__ = ["RewardSpec", "RewardTerm", "load_spec"]
