"""What ``GET /v1/rewards`` says about a reward: its kind, settings, gold columns and, for a composite, its terms.

A composite's config holds its parts as built rewards (a gate made from a spec's ``gate:`` key holds the inner
reward itself), which do not serialise; so a composite is described as a tree instead: each node names the
reward (``name``: its logged name, ``kind``: its registered name), its scalar settings and its gold columns, and
a composite lists its ``terms`` — a weighted sum's with their ``weight``, a gate's with their ``role`` (``reward``
or ``gate``, with the gate's threshold and what a failed gate scores), a route's with the ``route`` keys (or
patterns) that pick them. Describing never fails a request: what cannot be shown is named, not raised.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rewardsmith.compose import Gate, Route, WeightedSum
from rewardsmith.reward import Reward, held_rewards

#: Composites nested deeper than this are cut (a node says ``truncated``) so a description stays bounded.
MAX_DEPTH = 32
#: Config fields that hold a composite's parts; the parts appear as ``terms`` instead.
PART_FIELDS = {"weighted_sum": {"rewards", "weights"}, "gate": {"reward", "gate"}, "route": {"routes", "default"}}


def gold_of(reward: Reward) -> tuple[str, ...]:
    """The reward's gold columns (its parts' for a composite); none when it cannot say."""
    try:
        return tuple(str(c) for c in reward.gold_columns)
    except Exception:
        return ()


def config_of(reward: Reward) -> dict[str, Any]:
    """The reward's validated config as JSON values, without the fields that hold its parts."""
    config = getattr(reward, "config", None)
    if not isinstance(config, BaseModel):
        return {}
    try:
        exclude = PART_FIELDS.get(reward.name, set())
        return config.model_dump(mode="json", exclude=exclude, fallback=_shown)
    except Exception as exc:
        return {"unavailable": f"{type(exc).__name__}: {exc}"}


def _shown(value: Any) -> Any:
    """A value JSON has no type for: a reward by its name, anything else by its type."""
    if isinstance(value, Reward):
        return value.__name__
    return f"<{type(value).__name__}>"


def reward_tree(reward: Reward, depth: int = 0) -> dict[str, Any]:
    """``reward`` described as a node: name, kind, config, gold columns and (for a composite) its terms."""
    node: dict[str, Any] = {
        "name": str(getattr(reward, "__name__", reward.name)),
        "kind": reward.name,
        "config": config_of(reward),
        "gold_columns": list(gold_of(reward)),
    }
    if depth >= MAX_DEPTH:
        return {**node, "truncated": True}
    terms = _terms(reward, depth + 1)
    if terms:
        node["terms"] = terms
    return node


def _terms(reward: Reward, depth: int) -> list[dict[str, Any]]:
    if isinstance(reward, WeightedSum):
        return [{**reward_tree(p, depth), "weight": w} for p, w in zip(reward.parts, reward.weights, strict=True)]
    if isinstance(reward, Gate):
        gate = {"threshold": reward.config.threshold, "otherwise": reward.config.otherwise}
        return [
            {"role": "reward", **reward_tree(reward.inner, depth)},
            {"role": "gate", **reward_tree(reward.gate, depth), **gate},
        ]
    if isinstance(reward, Route):
        table = reward.config.table()
        terms = [
            {"route": list(keys), **reward_tree(t, depth)} for (keys, _), t in zip(table, reward.targets, strict=True)
        ]
        if reward.default is not None:
            terms.append({"route": "default", **reward_tree(reward.default, depth)})
        return terms
    return [reward_tree(part, depth) for part in held_rewards(reward)]
