"""Which rewards a server serves: the reward-spec grammar every adapter reads (:class:`RewardTerm`).

A spec file holds one term (``name:`` + ``config:``, optionally ``gate``/``label``), a list of terms, or a
training spec's mapping ``rewards: [...]`` (its ``async`` key and term weights are the trainer's business and
are ignored here). Each term is served under its logged name (``label`` when given). The adapter options
(:mod:`rewardsmith.adapters.options`) may sit beside a term's keys; the server reads three: ``label_column``, the
column OpenRLHF's ``labels`` fill (default: the reward's gold column, e.g. ``solution`` for ``math_equivalence``,
``tests`` for ``code_tests``, found through composites: see :func:`label_columns`), ``unscorable_score``, what
``/get_reward`` reports for this
reward's unscorable samples (default: the server's ``--unscorable-score``), and ``whole_batch``, which keeps a
request in one reward call. It is rarely needed: a reward whose score depends
on the other samples declares it (:meth:`~rewardsmith.reward.Reward.batch_dependency`), and the server then
never merges its requests and chunks them by whole groups (``llm_judge_group``) or not at all (a ``batch``
reward); other rewards are scored in chunks, so deadline and timings are per sample::

    rewards:
      - think_format
      - name: math_equivalence
        config: {timeout_s: 5}
      - {name: code_tests, label: code, config: {timeout_s: 5}}
      - {name: llm_judge_group, config: {num_generations: 8}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.adapters.options import options_of, split_options
from rewardsmith.adapters.runtime.serve.describe import gold_of, reward_tree
from rewardsmith.compose import RewardTerm, Route, as_term
from rewardsmith.groups import dependency_of
from rewardsmith.reward import ConfigError, Reward, held_rewards

#: Column OpenRLHF's labels go to when a reward declares no single required column.
FALLBACK_LABEL_COLUMN = "label"
#: Top-level keys of a training spec file that serving accepts (and ignores, beyond ``rewards``).
SPEC_FILE_KEYS = frozenset({"rewards", "async"})


@dataclass
class ServedReward:
    """A built reward and how the server exposes it."""

    reward: Reward
    label_column: str = FALLBACK_LABEL_COLUMN
    whole_batch: bool = False
    spec: dict[str, Any] = field(default_factory=dict)
    #: What ``/get_reward`` reports for an unscorable sample of this reward (None: the server's setting).
    unscorable_score: float | None = None
    #: Every column plain OpenRLHF labels fill (a route's targets may read different ones); ``label_column`` first.
    label_columns: tuple[str, ...] = ()
    #: Why plain labels have no one column for this reward (None: they do); mapping labels are still read.
    label_problem: str | None = None

    def __post_init__(self) -> None:
        if not self.label_columns:
            self.label_columns = (self.label_column,)

    @classmethod
    def wrap(cls, reward: Reward | ServedReward) -> ServedReward:
        if isinstance(reward, ServedReward):
            return reward
        return served_reward(reward, spec={"name": reward.name})

    def describe(self, served_name: str) -> dict[str, Any]:
        """What ``GET /v1/rewards`` shows: names, the validated config, a composite's terms (each with its kind,
        weight or role, and gold columns) and how OpenRLHF labels map."""
        tree = reward_tree(self.reward)
        return {
            "name": served_name,
            "reward": self.reward.name,
            "config": redacted(tree["config"]),
            "terms": redacted(tree.get("terms", [])),
            "gold_columns": tree["gold_columns"],
            "label_column": self.label_column,
            "label_columns": list(self.label_columns),
            "label_problem": self.label_problem,
            "whole_batch": self.whole_batch,
            "unscorable_score": self.unscorable_score,
            "batch_dependency": dependency_of(self.reward),
        }


#: Config keys whose values are secrets: shown as "***" by ``GET /v1/rewards`` (``api_key`` of a judge client).
SECRET_KEYS = ("api_key", "password", "secret", "token", "authorization")


def redacted(value: Any) -> Any:
    """``value`` with every secret-named key's value hidden, at any depth."""
    if isinstance(value, Mapping):
        hidden = {k for k, v in value.items() if v is not None and str(k).lower().endswith(SECRET_KEYS)}
        return {k: "***" if k in hidden else redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v) for v in value]
    return value


class AmbiguousLabels(ConfigError):
    """Plain OpenRLHF labels cannot fill one gold column: the reward's parts read their gold from different ones."""


def label_columns(reward: Reward) -> tuple[str, ...]:
    """The columns OpenRLHF's plain ``labels`` fill so that every part of ``reward`` finds its gold there.

    A leaf reward's one gold column (none, or several: the labels go to ``label`` and must be mappings to reach
    more). A composite's parts all score the same sample, so they must agree on one column (a gate's gate usually
    reads none); parts reading different ones raise :class:`AmbiguousLabels`. A route scores each sample with one
    target only, so the label fills every target's column and each reads its own.
    """
    if isinstance(reward, Route):
        targets = [t for t in [*reward.targets, reward.default] if t is not None]
        return tuple(dict.fromkeys(c for t in targets for c in label_columns(t)))
    held = held_rewards(reward)
    if not held:
        gold = gold_of(reward)
        return gold if len(gold) == 1 else ()
    by_part = [(part.__name__, label_columns(part)) for part in held]
    found = tuple(dict.fromkeys(c for _, columns in by_part for c in columns))
    if len(found) > 1:
        reads = "; ".join(f"{name} reads {', '.join(columns)}" for name, columns in by_part if columns)
        raise AmbiguousLabels(
            f"{reward.__name__}: OpenRLHF's labels fit no one gold column ({reads}); set label_column: COLUMN on "
            "its spec entry, or send each label as a mapping {column: value}"
        )
    return found


def served_reward(
    reward: Reward,
    *,
    label_column: str | None = None,
    whole_batch: bool = False,
    spec: dict[str, Any] | None = None,
    unscorable_score: float | None = None,
) -> ServedReward:
    """A :class:`ServedReward` whose label columns are ``label_column`` when given, else found in the reward."""
    problem = None
    if label_column:
        columns: tuple[str, ...] = (label_column,)
    else:
        try:
            columns = label_columns(reward) or (FALLBACK_LABEL_COLUMN,)
        except AmbiguousLabels as exc:
            columns, problem = (FALLBACK_LABEL_COLUMN,), str(exc)
    return ServedReward(
        reward,
        columns[0],
        whole_batch,
        spec if spec is not None else {"name": reward.name},
        unscorable_score,
        label_columns=columns,
        label_problem=problem,
    )


def default_label_column(reward: Reward) -> str:
    """The first column plain OpenRLHF labels fill (``label`` when none or several)."""
    return served_reward(reward).label_column


def check_openrlhf_labels(served: Mapping[str, ServedReward], openrlhf_reward: str | None = None) -> None:
    """Refuse to start when the reward behind ``POST /get_reward`` has no one column for OpenRLHF's labels.

    Otherwise every label would land in a column no part reads, and OpenRLHF would train on a reward that
    scores every sample as unscorable (0.0). Other served rewards keep serving ``/v1/score``; their
    ``/get_reward/{name}`` refuses plain labels with the same one-line fix.
    """
    name = openrlhf_reward or next(iter(served), None)
    item = served.get(name) if name is not None else None
    if item is not None and item.label_problem:
        raise ConfigError(f"serve spec: POST /get_reward serves {item.label_problem}")


def served_entry(entry: Any, index: int) -> tuple[str, ServedReward]:
    """One spec entry built: its served name and :class:`ServedReward` (its adapter options read beside it)."""
    where = f"serve spec: rewards.{index}"
    try:
        entry, raw = split_options(entry, where)
        options = options_of(raw, where)
        term = as_term(entry)
    except ConfigError as exc:
        message = str(exc)
        raise ConfigError(message if message.startswith(where) else f"{where}: {message}") from None
    reward = term if isinstance(term, Reward) else term.build()
    spec = term.model_dump(exclude_defaults=True) if isinstance(term, RewardTerm) else {"name": reward.name}
    return reward.__name__, served_reward(
        reward,
        label_column=options.label_column,
        whole_batch=options.whole_batch,
        spec=spec,
        unscorable_score=options.unscorable_score,
    )


def build_served(source: Any) -> dict[str, ServedReward]:
    """Build every reward of a loaded spec document once (a typo fails at start); served names must be unique."""
    if isinstance(source, Mapping) and "name" not in source:
        unknown = sorted(set(source) - SPEC_FILE_KEYS)
        if unknown or "rewards" not in source:
            raise ConfigError(f"serve spec: expected 'name' or 'rewards' at the top level, got keys {sorted(source)}")
        source = source["rewards"]
    entries = source if isinstance(source, list) else [source]
    if not entries:
        raise ConfigError("serve spec: no rewards")
    served: dict[str, ServedReward] = {}
    for index, entry in enumerate(entries):
        name, item = served_entry(entry, index)
        if name in served:
            raise ConfigError(f"serve spec: rewards.{index}: {name!r} is served twice; give one a distinct 'label'")
        served[name] = item
    return served


def load_served(path: str | Path) -> dict[str, ServedReward]:
    """Build the served rewards of a YAML (or JSON) spec file (read as untrusted: :mod:`rewardsmith.spec_files`)."""
    from rewardsmith.spec_files import read_spec_file

    return build_served(read_spec_file(path))
