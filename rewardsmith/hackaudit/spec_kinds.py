"""What a reward spec is: the kinds of reward it holds and the columns and budgets the attacks must respect.

The kinds decide which attack families apply: ``math`` (an answer checked against a gold column), ``code``
(a program run against tests), ``format`` (tags, regexes, schemas, length) and ``judge`` (an LLM judge or a
reward model). A plugin reward declares its own with an ``audit_kinds`` class attribute; a reward whose kind is
unknown gets every text attack (math, format, judge), since nothing says it cannot be fooled that way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, Field

KINDS = ("math", "code", "format", "judge")

KINDS_BY_REWARD: dict[str, frozenset[str]] = {
    "math_equivalence": frozenset({"math"}),
    "code_tests": frozenset({"code"}),
    "think_format": frozenset({"format"}),
    "tag_count": frozenset({"format"}),
    "json_schema": frozenset({"format"}),
    "soft_overlong": frozenset({"format"}),
    "cosine_length": frozenset({"format"}),
    "repetition_penalty": frozenset({"format"}),
    # a regex is how "any number" accuracy and format checks are written: both families can fool it
    "regex_match": frozenset({"math", "format"}),
    "instruction_following": frozenset({"format", "judge"}),
    "llm_judge": frozenset({"judge"}),
    "llm_judge_group": frozenset({"judge"}),
    "llm_rubric": frozenset({"judge"}),
    "reward_model": frozenset({"judge"}),
}
#: Rewards that only combine others: their kinds are their children's.
COMBINERS = frozenset({"weighted_sum", "gate", "route", "remote", "ray_pool"})
TEXT_KINDS = frozenset({"math", "format", "judge"})


class SpecProfile(BaseModel):
    """What the attacks need to know about the audited spec."""

    kinds: list[str] = Field(description="reward kinds found in the spec, in KINDS order")
    reward_names: list[str] = Field(description="every registered reward the spec names")
    gold_column: str = "solution"
    tests_column: str = "tests"
    answer_tag: str | None = Field(None, description="think_format's answer tag, when the spec asks for one")
    length_target: int = Field(512, description="characters the padding attacks pad to")
    code_timeout_s: float = 5.0


def reward_terms(node: Any, known: set[str]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every ``(name, config)`` the spec names, nested ones included (gates, routes, wrapped correctness)."""
    if isinstance(node, Mapping):
        name = node.get("name")
        if isinstance(name, str) and name in known:
            yield name, node.get("config") or {}
        for key, value in node.items():
            if key != "name" or value is not name:  # the term's own name is no second term without its config
                yield from reward_terms(value, known)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from reward_terms(value, known)
    elif isinstance(node, str) and node in known:
        yield node, {}


def _flat(reward: Any, config: Any) -> Any:
    """A term's config with its grouped settings spelled flat, as the profile reads them; as given when the reward's
    config cannot say (building the reward reports a bad config, not this)."""
    try:
        return reward.Config.flat(config)
    except Exception:
        return config


def profile_spec(raw_spec: Any) -> SpecProfile:
    """The :class:`SpecProfile` of a spec as loaded from YAML (a mapping with ``rewards`` or a list of terms)."""
    from rewardsmith.registry import list_rewards, reward_class

    known = set(list_rewards())
    terms = list(reward_terms(raw_spec, known))
    kinds: set[str] = set()
    profile: dict[str, Any] = {}
    for name, config in terms:
        if name in COMBINERS:
            continue
        declared = getattr(reward_class(name), "audit_kinds", None)
        config = _flat(reward_class(name), config)  # grouped settings (sandbox: {timeout_s: 10}) read as flat ones
        kinds |= set(declared) if declared else set(KINDS_BY_REWARD.get(name, TEXT_KINDS))
        if name == "math_equivalence" and config.get("gold_column"):
            profile["gold_column"] = config["gold_column"]
        if name == "code_tests":
            profile["tests_column"] = config.get("tests_column", "tests")
            profile["code_timeout_s"] = float(config.get("timeout_s", 5.0))
        if name == "think_format" and config.get("answer_tag"):
            profile["answer_tag"] = config["answer_tag"]
        if name == "soft_overlong":
            profile["length_target"] = int(config.get("max_length", 4096)) - int(config.get("buffer", 1024))
        if name == "cosine_length":
            profile["length_target"] = int(config.get("max_length", 1000))
    return SpecProfile(
        kinds=[k for k in KINDS if k in kinds],
        reward_names=sorted({name for name, _ in terms}),
        **profile,
    )
