"""Which rewards a server serves: the reward-spec grammar every adapter reads (:class:`RewardTerm`).

A spec file holds one term (``name:`` + ``config:``, optionally ``gate``/``label``), a list of terms, or a
training spec's mapping ``rewards: [...]`` (its ``async`` key and term weights are the trainer's business and
are ignored here). Each term is served under its logged name (``label`` when given). The adapter options
(:mod:`rewardsmith.adapters.options`) may sit beside a term's keys; the server reads three: ``label_column``, the
column OpenRLHF's ``labels`` fill (default: the reward's one required column, e.g. ``solution`` for
``math_equivalence``, ``tests`` for ``code_tests``), ``unscorable_score``, what ``/get_reward`` reports for this
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

from pydantic import BaseModel

from rewardsmith.adapters.options import options_of, split_options
from rewardsmith.compose import RewardTerm, as_term
from rewardsmith.groups import dependency_of
from rewardsmith.reward import ConfigError, Reward

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

    @classmethod
    def wrap(cls, reward: Reward | ServedReward) -> ServedReward:
        if isinstance(reward, ServedReward):
            return reward
        return cls(reward=reward, label_column=default_label_column(reward), spec={"name": reward.name})

    def describe(self, served_name: str) -> dict[str, Any]:
        """What ``GET /v1/rewards`` shows: names, the validated config and how OpenRLHF labels map."""
        config = getattr(self.reward, "config", None)
        return {
            "name": served_name,
            "reward": self.reward.name,
            "config": redacted(config.model_dump(mode="json")) if isinstance(config, BaseModel) else {},
            "label_column": self.label_column,
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


def default_label_column(reward: Reward) -> str:
    try:
        required = tuple(reward.required_columns)
    except Exception:
        required = ()
    return required[0] if len(required) == 1 else FALLBACK_LABEL_COLUMN


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
    column = options.label_column or default_label_column(reward)
    return reward.__name__, ServedReward(reward, column, options.whole_batch, spec, options.unscorable_score)


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
    """Build the served rewards of a YAML (or JSON) spec file."""
    import yaml

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such reward spec file: {path}")
    try:
        document = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1}, column {where.column + 1})" if where is not None else ""
        raise ConfigError(f"{path}: not valid YAML{line}: {getattr(exc, 'problem', None) or exc}") from None
    return build_served(document)
