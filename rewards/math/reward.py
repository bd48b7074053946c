"""``math_equivalence``: 1.0 when the completion's final answer equals the gold, else 0.0.

Thin composition of :mod:`~rewardkit.rewards.math.extract` (find both answers),
:func:`~rewardkit.rewards.math.grade.fast_verdict` (exact, in-process) and
:func:`~rewardkit.rewards.math.grade.symbolic_verdict` (math-verify + sympy in a
:class:`~rewardkit.hard_timeout.HardTimeoutPool`, killed on overrun).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any, Literal

from pydantic import Field

from rewardkit.hard_timeout import CallStatus, HardTimeoutPool
from rewardkit.registry import register_reward
from rewardkit.reward import Reward, RewardConfig
from rewardkit.rewards.math.extract import Extraction, extract_answer, extract_gold
from rewardkit.rewards.math.grade import Verdict, fast_verdict, symbolic_verdict
from rewardkit.rewards.math.normalize import clean_latex
from rewardkit.types import RewardResult


class MathEquivalenceConfig(RewardConfig):
    gold_column: str = Field("solution", description="dataset column holding the reference answer")
    boxed: Literal["last", "first"] = Field("last", description="which \\boxed{} counts when there are several")
    anchors: bool = Field(True, description="read 'the answer is …', 'Final answer:', '####' when there is no box")
    fallback_last_number: bool = Field(False, description="else take the last number in the text")
    reasoning_end: str | None = Field("</think>", description="only text after this tag is searched")
    rel_tol: float = Field(
        1e-6,
        ge=0,
        lt=1,
        description="relative tolerance of a decimal against a value it cannot write exactly (1/3, sqrt 2)",
    )
    float_rounding: int = Field(6, ge=0, le=30, description="math-verify's float rounding in the symbolic stage")
    symbolic: bool = Field(True, description="send undecided pairs to math-verify/sympy (else they are unscorable)")
    timeout_s: float = Field(
        5.0, gt=0, le=600, description="hard limit for one symbolic comparison, waiting for a worker included"
    )
    timeout_score: float | None = Field(
        None,
        description="score of an answer whose symbolic comparison overran: None = unscorable; a number (e.g. 0.0) "
        "denies a wrong answer such as \\boxed{1000000!} the escape of being unscorable",
    )
    workers: int | None = Field(None, ge=1, description="worker processes (default: os.cpu_count())")
    memory_limit_mb: int | None = Field(4096, ge=256, description="address-space limit of each worker")
    cache_size: int = Field(4096, ge=0, description="parsed golds and symbolic verdicts kept (LRU)")
    correct: float = Field(1.0, description="score of a correct answer")
    wrong: float = Field(0.0, description="score of a wrong or missing answer")


class _LruCache:
    """A small thread-safe LRU map (the same gold is scored ``num_generations`` times per step)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        return None

    def put(self, key: Hashable, value: Any) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


@register_reward("math_equivalence")
class MathEquivalence(Reward):
    r"""Math answer equivalence: ``correct`` (1.0) if the final answer equals the gold, ``wrong`` (0.0) if
    it differs or is missing, ``None`` when the gold is unreadable or the comparison timed out.

    Args (config): ``gold_column`` ("solution"), ``boxed`` ("last"/"first"), ``anchors``,
    ``fallback_last_number``, ``reasoning_end`` ("</think>"), ``rel_tol`` (1e-6), ``timeout_s`` (5),
    ``workers`` (cpu count), ``symbolic`` (True), ``cache_size``, ``correct``/``wrong``, ``timeout_score``
    (None: an answer whose comparison overran is unscorable; a number scores it so, e.g. 0.0 for a policy
    that learns to write answers too costly to check). A call that found no ready worker in time (a cold
    start) is always unscorable, whatever ``timeout_score``. Timeouts are never cached.

    Numbers: integers, fractions and decimals that can be written exactly compare exactly
    (``2000001.0`` is not ``2000000``, ``0.5`` is ``\frac12``); ``rel_tol`` applies only where a decimal
    stands for a value it cannot write exactly (``0.3333333`` for ``\frac13``, ``1.41421356`` for ``\sqrt2``).

    Returns one score per completion; :meth:`details` adds a reason naming what was extracted from
    both sides and why the verdict, plus ``gold``/``extracted`` fields.

    >>> reward = MathEquivalence()
    >>> reward([r"... so \boxed{\dfrac{1}{2}}", "The answer is 0.4"], solution=["$0.5$", "2/5"])
    [1.0, 1.0]
    """

    name = "math_equivalence"
    Config = MathEquivalenceConfig

    @property
    def required_columns(self) -> tuple[str, ...]:  # type: ignore[override]
        """A misaligned column this reward reads makes a sample unscorable with a reason that names it."""
        return (self.config.gold_column,)  # type: ignore[attr-defined]

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self._setup()

    def _setup(self) -> None:
        cfg: MathEquivalenceConfig = self.config  # type: ignore[assignment]
        self._golds = _LruCache(cfg.cache_size)
        self._symbolic_cache = _LruCache(cfg.cache_size)
        # Started on first need; pickles as its settings only, so the reward ships to spawned workers.
        self.pool = HardTimeoutPool(
            workers=cfg.workers,
            timeout_s=cfg.timeout_s,
            preload=("rewardkit.rewards.math.grade", "math_verify", "latex2sympy2_extended"),
            warm_call=(symbolic_verdict, (r"\frac{x^2-1}{2}", r"\frac{(x-1)(x+1)}{2}", cfg.float_rounding)),
            memory_limit_mb=cfg.memory_limit_mb,
        )

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "__name__": self.__name__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup()

    def close(self) -> None:
        """Stop the worker processes (they also stop when the reward is garbage-collected)."""
        self.pool.close()

    # -- scoring ---------------------------------------------------------------------------------
    def gold_of(self, raw: Any) -> tuple[Extraction, str | None]:
        """The gold extraction and its cleaned LaTeX, cached per raw value."""
        key = (type(raw).__name__, raw) if isinstance(raw, Hashable) else None
        cached = self._golds.get(key) if key is not None else None
        if cached is not None:
            return cached
        extraction = extract_gold(raw)
        value = (extraction, clean_latex(extraction.text) if extraction.text else None)
        if key is not None:
            self._golds.put(key, value)
        return value

    def answer_of(self, completion: str) -> Extraction:
        cfg: MathEquivalenceConfig = self.config  # type: ignore[assignment]
        return extract_answer(
            completion,
            boxed=cfg.boxed,
            anchors=cfg.anchors,
            fallback_last_number=cfg.fallback_last_number,
            reasoning_end=cfg.reasoning_end,
        )

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        results: list[RewardResult | None] = []
        pending: dict[tuple[str, str], list[int]] = {}
        context: list[tuple[Extraction, Extraction] | None] = []
        for index, (completion, row) in enumerate(zip(completions, rows, strict=True)):
            result, ctx, pair = self._first_stage(completion, row)
            results.append(result)
            context.append(ctx)
            if pair is not None:
                pending.setdefault(pair, []).append(index)
        if pending:
            pairs = list(pending)
            for pair, verdict in zip(pairs, self._symbolic(pairs), strict=True):
                for index in pending[pair]:
                    gold, answer = context[index]  # type: ignore[misc]
                    results[index] = self._result(gold, answer, verdict)
        assert all(r is not None for r in results)
        return results  # type: ignore[return-value]

    def _first_stage(
        self, completion: Any, row: dict[str, Any]
    ) -> tuple[RewardResult | None, tuple[Extraction, Extraction] | None, tuple[str, str] | None]:
        cfg: MathEquivalenceConfig = self.config  # type: ignore[assignment]
        if cfg.gold_column not in row:
            return RewardResult.unscorable(f"no gold: column {cfg.gold_column!r} missing"), None, None
        gold, gold_clean = self.gold_of(row[cfg.gold_column])
        if gold_clean is None:
            return RewardResult.unscorable(f"gold unreadable: {gold.describe()}"), None, None
        if not isinstance(completion, str):
            return RewardResult.unscorable(f"completion is {type(completion).__name__}, not text"), None, None
        answer = self.answer_of(completion)
        if answer.text is None:
            return self._result(gold, answer, Verdict(False, "no final answer found")), None, None
        verdict = fast_verdict(gold_clean, answer.text, cfg.rel_tol)
        if verdict.equal is not None:
            return self._result(gold, answer, verdict), None, None
        if not cfg.symbolic:
            return self._result(gold, answer, Verdict(None, "needs symbolic comparison, which is off")), None, None
        return None, (gold, answer), (gold_clean, clean_latex(answer.text))

    def _symbolic(self, pairs: list[tuple[str, str]]) -> list[Verdict]:
        cfg: MathEquivalenceConfig = self.config  # type: ignore[assignment]
        verdicts: list[Verdict | None] = [self._symbolic_cache.get(p) for p in pairs]
        todo = [i for i, v in enumerate(verdicts) if v is None]
        outcomes = self.pool.map(symbolic_verdict, [(*pairs[i], cfg.float_rounding) for i in todo])
        for i, outcome in zip(todo, outcomes, strict=True):
            if outcome.status is CallStatus.OK:
                verdicts[i] = outcome.value
                if outcome.value.equal is not None:
                    self._symbolic_cache.put(pairs[i], outcome.value)
            elif outcome.status is CallStatus.TIMEOUT and outcome.started:
                # Not cached: an overrun under load may succeed later.
                verdicts[i] = Verdict(None, f"timeout: symbolic comparison exceeded {cfg.timeout_s:g} s", True)
            elif outcome.status is CallStatus.TIMEOUT:
                verdicts[i] = Verdict(None, f"timeout: no symbolic worker ready within {cfg.timeout_s:g} s")
            else:
                verdicts[i] = Verdict(None, f"symbolic comparison failed ({outcome.status.value}: {outcome.error})")
        return verdicts  # type: ignore[return-value]

    def _result(self, gold: Extraction, answer: Extraction, verdict: Verdict) -> RewardResult:
        cfg: MathEquivalenceConfig = self.config  # type: ignore[assignment]
        score = None if verdict.equal is None else (cfg.correct if verdict.equal else cfg.wrong)
        reason = f"gold {gold.describe()}; answer {answer.describe()}; {verdict.why}"
        if verdict.timed_out and cfg.timeout_score is not None:
            score = cfg.timeout_score
            reason += f" (scored timeout_score={cfg.timeout_score:g})"
        return RewardResult(score=score, reason=reason, gold=gold.text, extracted=answer.text)
