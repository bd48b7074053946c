"""Reward components: the terms of a weighted sum, each as its own signal, for trainers that normalise per term.

GDPO-style training (TRL's ``multi_objective_aggregation="normalize_then_sum"``, verl's ``gdpo`` estimator, the
mini trainer's ``reward_aggregation: normalize_then_sum``) normalises each term within its group before summing, so
a term with a wide spread cannot drown one with a narrow spread. That needs each term's score, not only the sum.

What a component is:

- the components of a ``weighted_sum`` (a spec's terms, once combined) are its parts, keyed by the part's logged
  name (a term's ``label``, else the reward's name; repeats get ``_2``, ``_3``); the value is the part's own score,
  unweighted: the weights belong to whoever sums (the trainer, or the weighted sum);
- a **gated** part is one component whose value is the gated score: the inner reward's score where the gate passes,
  ``gate_otherwise`` where it fails, ``None`` where the gate is unscorable. The gate is a component only if the spec
  also lists it as a term of its own;
- a **route** passes each sample to one target, and the sample carries that target's components; the route's
  components are those of all its targets together (in route order), and a sample has ``None`` for the components
  of routes it did not take. A GRPO group shares one prompt, so one route: a component absent from a group is
  absent from all of it, and normalising it within the group gives 0;
- any other reward has no components beyond its own score.

The scores come from the one scoring pass (the weighted sum attaches them to each result), never a second one.
"""

from __future__ import annotations

from collections.abc import Sequence

from rewardsmith.compose import Route, WeightedSum
from rewardsmith.reward import Reward
from rewardsmith.types import RewardResult


def component_names(reward: Reward) -> list[str]:
    """The component names ``reward``'s results carry (see the module); ``[]`` when it has none."""
    if isinstance(reward, WeightedSum):
        return list(reward.component_names)
    if isinstance(reward, Route):
        targets = [*reward.targets, *([reward.default] if reward.default is not None else [])]
        return list(dict.fromkeys(name for target in targets for name in component_names(target)))
    return []


def component_scores(result: RewardResult) -> dict[str, float | None]:
    """The components one result carries (``{}`` for a reward without components)."""
    components = getattr(result, "components", None)
    return dict(components) if isinstance(components, dict) else {}


def component_columns(names: Sequence[str], results: Sequence[RewardResult]) -> dict[str, list[float | None]]:
    """One list per component name, aligned with ``results`` (``None`` where a sample lacks that component)."""
    per_sample = [component_scores(r) for r in results]
    return {name: [scores.get(name) for scores in per_sample] for name in names}


__all__ = ["component_columns", "component_names", "component_scores"]
