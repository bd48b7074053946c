"""verifiers adapter: rewardkit rewards as the reward functions of a ``verifiers`` ``Rubric``.

verifiers' ``Rubric(funcs=[...], weights=[...])`` (``vf.Rubric`` in verifiers 0.1.3 to 0.3; 0.4 replaced it with the
v1 task API) calls each function once per rollout, passing only the keyword arguments its signature names, or all of
them when it takes ``**kwargs``: ``prompt``, ``completion``, ``answer``, ``info``, ``state``, ``task``, ``parser`` and
the dataset's other columns. It awaits the result when it is awaitable and adds ``weight * float(result)``.
:func:`reward_func` gives such a function (async, picklable) for one rewardkit reward spec::

    import verifiers as vf
    from rewardkit.adapters.verifiers import rubric

    rb = rubric([{"name": "math_equivalence"}, {"name": "think_format", "weight": 0.2}])
    env = vf.SingleTurnEnv(dataset=ds, rubric=rb)

What the reward sees: the assistant text of ``completion`` (plain text or chat messages, verifiers' message objects
included), ``prompt`` as the prompt column, and a row made of the dataset's other plain-valued columns, then the
entries of ``info``, then ``answer`` in the reward's gold column (``solution`` for ``math_equivalence``, ``tests``
for ``code_tests``, the reference column of a judge; ``answer_column`` overrides). An empty ``answer`` (verifiers'
default) leaves that column to the other sources.

A Rubric needs a number, so an unscorable sample (missing gold, sandbox failure, judge abstention) scores
``unscorable_score`` (default 0.0) and is logged with its reason; ``state["rewardkit"][name]`` keeps every score and
reason of the rollout.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rewardkit.compose import as_term, build_reward, spec_weight
from rewardkit.reward import ConfigError, Reward
from rewardkit.types import RewardResult

logger = logging.getLogger(__name__)

#: Term keys that belong to this adapter, accepted beside a term's ``name``/``config``/``weight``.
ADAPTER_KEYS = ("answer_column", "unscorable_score")
#: Keyword arguments of a Rubric call that are not dataset columns.
NOT_COLUMNS = frozenset({"prompt", "completion", "completions", "answer", "info", "state", "task", "parser"})
#: The verifiers releases that have ``Rubric`` and await async reward functions.
INSTALL_HINT = "pip install 'verifiers>=0.1.3,<0.4'"


class VerifiersOptions(BaseModel):
    """How rollouts map onto a reward's columns and what an unscorable sample scores."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    answer_column: str | None = Field(None, description="column `answer` fills (default: the reward's gold column)")
    unscorable_score: float = Field(0.0, description="score the Rubric sees for an unscorable sample")

    @field_validator("answer_column")
    @classmethod
    def _named(cls, value: str | None) -> str | None:
        if value is not None and not value:
            raise ValueError("answer_column must be a column name")
        return value


class VerifiersReward:
    """One rewardkit reward with the call shape of a verifiers reward function (async, one rollout per call)."""

    def __init__(self, spec: Any, options: VerifiersOptions | Mapping[str, Any] | None = None) -> None:
        self.options = _options(options)
        self.reward: Reward = build_reward(spec)
        self.answer_column = self.options.answer_column or gold_column(self.reward)
        self.__name__ = self.reward.__name__  # the Rubric's metric name

    def __repr__(self) -> str:
        return f"VerifiersReward({self.reward!r}, answer_column={self.answer_column!r})"

    async def __call__(
        self,
        prompt: Any = None,
        completion: Any = None,
        answer: Any = None,
        info: Any = None,
        state: Any = None,
        task: Any = None,
        **columns: Any,
    ) -> float:
        result = await self.adetail(prompt, completion, answer=answer, info=info, task=task, **columns)
        if isinstance(state, MutableMapping):
            try:
                state.setdefault("rewardkit", {})[self.__name__] = {"score": result.score, "reason": result.reason}
            except Exception:  # a state that refuses the record must not cost the score
                logger.debug("could not record the reason in the rollout state", exc_info=True)
        if result.score is None:
            logger.warning("%s: unscorable, scored %s: %s", self.__name__, self.options.unscorable_score, result.reason)
            return self.options.unscorable_score
        return float(result.score)

    async def adetail(self, prompt: Any = None, completion: Any = None, **columns: Any) -> RewardResult:
        """The reward's full verdict (score or ``None``, and the reason) for one rollout."""
        row = self.row(**columns)
        row["prompts"] = plain_messages(prompt, text_role="user")
        [result] = await self.reward.adetails([plain_messages(completion)], **{k: [v] for k, v in row.items()})
        return result

    def row(self, answer: Any = None, info: Any = None, task: Any = None, **columns: Any) -> dict[str, Any]:
        """The reward's dataset columns for one rollout: plain-valued columns, a task name (verifiers 0.1/0.2 pass
        ``task`` as a string, which a ``route`` reward can read), then ``info``, then ``answer``."""
        row = {k: v for k, v in columns.items() if k not in NOT_COLUMNS and _plain_data(v)}
        if isinstance(task, str):
            row["task"] = task
        if isinstance(info, str):  # some verifiers datasets keep info as JSON text
            try:
                info = json.loads(info)
            except json.JSONDecodeError:
                info = None
        if isinstance(info, Mapping):
            row.update(info)
        if answer is not None and not (isinstance(answer, str) and not answer):
            row[self.answer_column] = answer
        return row


def reward_func(spec: Any, *, answer_column: str | None = None, unscorable_score: float = 0.0) -> VerifiersReward:
    """A verifiers reward function for one rewardkit spec (a name, ``{name, config}``, a term or a Reward).

    >>> fn = reward_func("math_equivalence")
    >>> await fn(completion=[{"role": "assistant", "content": "\\\\boxed{4}"}], answer="4")  # doctest: +SKIP
    1.0
    """
    return VerifiersReward(spec, {"answer_column": answer_column, "unscorable_score": unscorable_score})


def rubric(specs: Any, *, parser: Any = None, **options: Any) -> Any:
    """A ``verifiers.Rubric`` with one function per term, weighted by the terms' ``weight``.

    ``specs``: a spec, a list of specs, a mapping with ``rewards: [...]`` or a YAML/JSON spec file (the
    :class:`~rewardkit.compose.RewardTerm` grammar). A term may also carry ``answer_column`` and
    ``unscorable_score``, which override ``options`` (the same two keys) for that term. ``parser`` is handed to
    the Rubric.
    """
    funcs, weights = rubric_funcs(specs, **options)
    kwargs: dict[str, Any] = {"funcs": funcs, "weights": weights}
    if parser is not None:
        kwargs["parser"] = parser
    return rubric_class()(**kwargs)


def rubric_funcs(specs: Any, **options: Any) -> tuple[list[VerifiersReward], list[float]]:
    """``(funcs, weights)`` for ``Rubric(funcs=..., weights=...)``; needs no verifiers install."""
    funcs, weights = [], []
    for index, entry in enumerate(_entries(specs)):
        term_options = dict(options)
        if isinstance(entry, Mapping):
            entry = dict(entry)
            term_options.update({key: entry.pop(key) for key in ADAPTER_KEYS if key in entry})
        try:
            term = as_term(entry)
            funcs.append(VerifiersReward(term, term_options))
        except ConfigError as exc:
            raise ConfigError(f"verifiers rubric: rewards.{index}: {exc}") from None
        weights.append(spec_weight(term))
    names = [f.__name__ for f in funcs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(
            f"verifiers rubric: several terms are named {', '.join(map(repr, repeated))}; the Rubric keys its "
            "metrics by name, so give all but one a distinct 'label'"
        )
    return funcs, weights


def rubric_class() -> type:
    """``verifiers.Rubric``, or an ImportError that names the fix."""
    try:
        import verifiers
    except ImportError as exc:
        raise ImportError(f"rubric() needs the verifiers package ({exc}): {INSTALL_HINT}") from None
    try:
        return verifiers.Rubric
    except ImportError as exc:  # verifiers 0.3 loads its Rubric on first touch, with its own dependencies
        raise ImportError(f"verifiers {_version(verifiers)} cannot load its Rubric ({exc}): {INSTALL_HINT}") from None
    except AttributeError:
        raise ImportError(
            f"verifiers {_version(verifiers)} has no Rubric (0.4 replaced it with v1 tasks); {INSTALL_HINT}, or "
            "call reward_func(...) from a v1 task's @vf.reward method"
        ) from None


def gold_column(reward: Reward) -> str:
    """The column ``answer`` goes to: the one gold column the reward (or its parts) reads, else ``answer``."""
    columns = _gold_columns(reward, depth=0)
    return columns[0] if len(columns) == 1 else "answer"


def plain_messages(value: Any, text_role: str = "assistant") -> Any:
    """A prompt or completion as rewardkit reads it: text as is, messages as dicts (verifiers' message models
    dumped; its completion-format ``text`` role read as ``text_role``)."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        return _plain_message(value, text_role) if _is_model(value) else value
    return [_plain_message(m, text_role) for m in value]


def _plain_message(message: Any, text_role: str) -> Any:
    if _is_model(message):
        message = message.model_dump(exclude_none=True)
    elif not isinstance(message, Mapping) and hasattr(message, "role") and hasattr(message, "content"):
        message = {"role": message.role, "content": message.content}
    if isinstance(message, Mapping) and message.get("role") == "text":
        message = {**message, "role": text_role}
    return message


def _is_model(value: Any) -> bool:
    return callable(getattr(value, "model_dump", None))


def _plain_data(value: Any) -> bool:
    """Dataset values (text, numbers, lists, dicts), not the objects a Rubric also passes (parsers, clients)."""
    return value is None or isinstance(value, (str, int, float, dict, list, tuple))


def _gold_columns(reward: Any, depth: int) -> list[str]:
    try:
        own = list(reward.required_columns)
    except Exception:
        own = []
    if not own:
        reference = getattr(getattr(reward, "config", None), "reference_column", None)
        own = [reference] if isinstance(reference, str) and reference else []
    if depth < 8:  # composites (gate, weighted_sum, route) read their parts' columns
        for child in _children(reward):
            own.extend(_gold_columns(child, depth + 1))
    return list(dict.fromkeys(own))


def _children(reward: Any) -> list[Any]:
    children = [getattr(reward, "inner", None), getattr(reward, "default", None), *getattr(reward, "parts", ())]
    routes = getattr(reward, "routes", None)
    if isinstance(routes, Mapping):
        children.extend(routes.values())
    return [c for c in children if isinstance(c, Reward)]


def _entries(specs: Any) -> list[Any]:
    if isinstance(specs, Path) or (isinstance(specs, str) and specs.endswith((".yaml", ".yml", ".json"))):
        import yaml

        path = Path(specs)
        if not path.exists():
            raise FileNotFoundError(f"no such reward spec file: {path}")
        specs = yaml.safe_load(path.read_text())
    if isinstance(specs, Mapping) and "rewards" in specs:
        specs = specs["rewards"]
    entries = list(specs) if isinstance(specs, (list, tuple)) else [specs]
    if not entries:
        raise ConfigError("verifiers rubric: no reward terms")
    return entries


def _options(options: VerifiersOptions | Mapping[str, Any] | None) -> VerifiersOptions:
    if isinstance(options, VerifiersOptions):
        return options
    try:
        return VerifiersOptions.model_validate(dict(options or {}))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '<options>'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"verifiers adapter: {problems}") from None


def _version(module: Any) -> str:
    return str(getattr(module, "__version__", "?"))


__all__ = ["VerifiersOptions", "VerifiersReward", "gold_column", "plain_messages", "reward_func", "rubric"]
