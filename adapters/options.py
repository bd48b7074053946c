"""The options adapters read beside a reward spec, each declared once, and the one rule for what unscorable becomes.

A term of a spec may carry these keys beside its ``name``/``config``/``weight``::

    rewards:
      - name: math_equivalence
        answer_column: solution     # verifiers: the column a rollout's `answer` fills
        label_column: solution      # rewardsmith serve: the column OpenRLHF's `labels` fill
        unscorable_score: -1.0      # verifiers, serve's /get_reward: the number an unscorable sample gets
      - {name: llm_judge_group, whole_batch: true}   # rewardsmith serve: one reward call per request

Every adapter validates them with :class:`AdapterOptions` (so one spec file serves TRL, verifiers and
``rewardsmith serve`` alike, and a typo fails naming the keys there are) and uses the ones it has a use for:
TRL takes ``None`` as it is, so it reads none; verl's mapping carries ``unscorable_score`` at its top level.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator

from rewardsmith.compose import RewardTerm
from rewardsmith.reward import ConfigError

#: What an unscorable sample scores for a trainer that needs a number, when nothing says otherwise.
DEFAULT_UNSCORABLE_SCORE = 0.0


def unscorable_as(score: float | None, unscorable_score: float | None = None) -> float:
    """The number a trainer that cannot take ``None`` gets: the score, or ``unscorable_score`` (default 0.0) for an
    unscorable sample. Adapters flag such a sample beside the number, so the two never look alike in the logs."""
    if score is not None:
        return float(score)
    return float(DEFAULT_UNSCORABLE_SCORE if unscorable_score is None else unscorable_score)


class UnscorableScore(BaseModel):
    """The ``unscorable_score`` option, declared once for every model that carries it (adapter options, verl's
    mapping, the server's settings)."""

    unscorable_score: float | None = Field(
        None,
        description="what an unscorable sample scores for a trainer that needs a number (None: 0.0); it is flagged "
        "unscorable beside the number",
    )

    def as_number(self, score: float | None) -> float:
        """:func:`unscorable_as` with this model's ``unscorable_score``."""
        return unscorable_as(score, self.unscorable_score)


class AdapterOptions(UnscorableScore):
    """How a trainer's fields meet a reward's columns, and how a transport may cut a batch."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    label_column: str | None = Field(
        None, description="serve: column OpenRLHF's labels fill (None: the reward's one required column, else 'label')"
    )
    answer_column: str | None = Field(
        None, description="verifiers: column a rollout's `answer` fills (None: the reward's gold column)"
    )
    whole_batch: StrictBool = Field(False, description="serve: score each request in one reward call, never chunked")

    @field_validator("label_column", "answer_column")
    @classmethod
    def _named(cls, value: str | None) -> str | None:
        if value is not None and not value:
            raise ValueError("must be a column name")
        return value


#: The option keys a spec term may carry beside the reward term's own keys.
OPTION_KEYS = tuple(AdapterOptions.model_fields)
#: A reward term's own keys (:class:`~rewardsmith.compose.RewardTerm`).
TERM_KEYS = tuple(RewardTerm.model_fields)


def options_of(options: AdapterOptions | Mapping[str, Any] | None, where: str = "adapter options") -> AdapterOptions:
    """Validated options, or one ConfigError that names the bad key (and, for an unknown one, the known keys)."""
    if isinstance(options, AdapterOptions):
        return options
    data = dict(options or {})
    unknown = sorted(set(map(str, data)) - set(OPTION_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown option keys {unknown}; the options are {', '.join(OPTION_KEYS)}")
    try:
        return AdapterOptions.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '<options>'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"{where}: {problems.replace('Value error, ', '')}") from None


def split_options(entry: Any, where: str = "reward spec") -> tuple[Any, dict[str, Any]]:
    """A spec entry without its option keys, and those options (not yet validated: see :func:`options_of`).

    An entry that is not a ``{name: ...}`` mapping (a name, a reward instance) carries no options. A key that is
    neither a term's nor an option is refused here, naming both lists, rather than as an unknown term key.
    """
    if not isinstance(entry, Mapping) or "name" not in entry:
        return entry, {}
    unknown = sorted(str(k) for k in entry if k not in TERM_KEYS and k not in OPTION_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown keys {unknown}; a term takes {', '.join(TERM_KEYS)} and the adapter options "
            f"{', '.join(OPTION_KEYS)}"
        )
    term = {k: v for k, v in entry.items() if k not in OPTION_KEYS}
    return term, {k: v for k, v in entry.items() if k in OPTION_KEYS}


__all__ = [
    "DEFAULT_UNSCORABLE_SCORE",
    "OPTION_KEYS",
    "AdapterOptions",
    "UnscorableScore",
    "options_of",
    "split_options",
    "unscorable_as",
]
