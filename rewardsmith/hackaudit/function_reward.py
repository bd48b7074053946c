"""A third-party reward function as a registered reward, so ``audit reward`` can attack it as it ships.

Trainers take rewards in two shapes: TRL's ``f(completions, **columns) -> list[float | None]`` (one call per batch,
chat completions as ``[{"role": "assistant", "content": ...}]``) and verl's per-sample
``compute_score(solution_str, ground_truth, ...) -> float | dict``. The audit scores a registered reward with rows,
so the function is wrapped, not rewritten: the class below passes each batch to it unchanged and reads back what it
returns. A function that raises on a batch is retried one completion at a time, so one completion that crashes it
costs that completion a ``None`` with the error (the audit counts it unscorable), not the batch.

The kinds (``math``, ``code``, ``format``) say which attack families apply; a reward's own name is what the spec
names, so register each function once per process, then audit a spec such as ``{"rewards": [{"name": NAME}]}``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from rewardsmith.registry import register_reward
from rewardsmith.reward import Reward, RewardConfig
from rewardsmith.types import RewardResult

#: columns the base class adds to every row that a trainer would not pass as dataset columns
_NOT_COLUMNS = frozenset({"prompt", "completion"})


class FunctionRewardConfig(RewardConfig):
    pass


class FunctionReward(Reward[FunctionRewardConfig]):
    """Calls :attr:`function` on each batch, TRL-style, or on each sample, verl-style (:attr:`per_sample`)."""

    function: ClassVar[Callable[..., Any]]
    #: verl's shape: ``function(completion, row)`` per sample, returning a number or a dict with ``"score"``
    per_sample: ClassVar[bool] = False
    #: TRL's chat shape: each completion is ``[{"role": "assistant", "content": text}]``
    conversational: ClassVar[bool] = True
    audit_kinds: ClassVar[frozenset[str]] = frozenset()

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        texts = ["" if c is None else c for c in completions]
        if self.per_sample:
            return [self._one(t, r) for t, r in zip(texts, rows, strict=True)]
        try:
            return self._call(texts, rows)
        except Exception:  # retried alone: the completion that breaks the function is the one marked
            out: list[RewardResult] = []
            for text, row in zip(texts, rows, strict=True):
                try:
                    out += self._call([text], [row])
                except Exception as exc:
                    out.append(RewardResult.unscorable(f"{self.name} raised {type(exc).__name__}: {exc}"[:300]))
            return out

    def _call(self, texts: list[str], rows: list[dict[str, Any]]) -> list[RewardResult]:
        keys = dict.fromkeys(k for r in rows for k in r if k not in _NOT_COLUMNS)
        columns = {k: [r.get(k) for r in rows] for k in keys}
        completions: list[Any] = (
            [[{"role": "assistant", "content": t}] for t in texts] if self.conversational else list(texts)
        )
        prompts = [r.get("prompt") for r in rows]
        scores = type(self).function(completions=completions, prompts=prompts, **columns)
        return [self._result(s) for s in _as_list(scores, len(texts))]

    def _one(self, text: str, row: Mapping[str, Any]) -> RewardResult:
        try:
            return self._result(type(self).function(text, row))
        except Exception as exc:
            return RewardResult.unscorable(f"{self.name} raised {type(exc).__name__}: {exc}"[:300])

    def _result(self, value: Any) -> RewardResult:
        if isinstance(value, Mapping):
            value = value.get("score")
        if isinstance(value, (list, tuple)) and value:
            value = value[0]  # verl's code scorers return (score, metadata)
        if value is None:
            return RewardResult.unscorable(f"{self.name} returned None")
        return RewardResult(score=float(value), reason=f"{self.name} returned {float(value):g}")


def _as_list(scores: Any, n: int) -> list[Any]:
    out = list(scores)
    if len(out) != n:
        raise ValueError(f"returned {len(out)} scores for {n} completions")
    return out


def function_reward(
    name: str,
    function: Callable[..., Any],
    *,
    audit_kinds: Iterable[str],
    per_sample: bool = False,
    conversational: bool = True,
) -> type[FunctionReward]:
    """Register ``function`` as the reward ``name`` and return its class.

    ``per_sample=False``: ``function(completions=..., prompts=..., **columns)`` once per batch (TRL's contract);
    ``per_sample=True``: ``function(completion_text, row)`` once per completion (wrap verl's ``compute_score`` in a
    two-argument function that picks its ``ground_truth`` from the row).
    """
    attributes = {
        "function": staticmethod(function),
        "per_sample": per_sample,
        "conversational": conversational,
        "audit_kinds": frozenset(audit_kinds),
        "__doc__": f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', name)} as it ships.",
    }
    cls = type(f"FunctionReward_{name.replace('-', '_')}", (FunctionReward,), attributes)
    return register_reward(name)(cls)
