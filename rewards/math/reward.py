"""``math_equivalence``: 1.0 when the completion's final answer equals the gold, else 0.0.

Thin composition of :mod:`~rewardsmith.rewards.math.extract` (find both answers),
:func:`~rewardsmith.rewards.math.grade.fast_verdict` (exact) and
:func:`~rewardsmith.rewards.math.symbolic.symbolic_verdict` (math-verify + sympy, killed on overrun), run in the
processes of a :class:`~rewardsmith.hard_timeout.HardTimeoutPool` once it has started (see
:mod:`~rewardsmith.rewards.math.dispatch`); before that, in the caller, with only the comparisons in the pool.
"""

from __future__ import annotations

import pickle
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Literal, cast

from pydantic import Field, field_validator

from rewardsmith.first_use import build_once
from rewardsmith.hard_timeout import CallOutcome, CallStatus, HardTimeoutPool, shared_pool
from rewardsmith.registry import register_reward
from rewardsmith.reward import Reward, RewardConfig
from rewardsmith.reward_config import ConfigGroup
from rewardsmith.rewards.math.blame import settle_failure
from rewardsmith.rewards.math.dispatch import WORKERS_ENV, default_workers, host_budget, score_in_workers
from rewardsmith.rewards.math.extract import Extraction, extract_answer, extract_gold
from rewardsmith.rewards.math.grade import fast_verdict
from rewardsmith.rewards.math.judge_fallback import JudgeFallback
from rewardsmith.rewards.math.normalize import clean_latex_with_unit
from rewardsmith.rewards.math.symbolic import symbolic_verdict
from rewardsmith.rewards.math.verdict import Verdict
from rewardsmith.types import RewardResult

#: One completion after the comparison: its result, or (gold, answer, cleaned gold, verdict) for the judge fallback.
Scored = RewardResult | tuple[Extraction, Extraction, str, Verdict]


class MathExtract(ConfigGroup):
    """Where the final answer is read in a completion."""

    boxed: Literal["collect", "last", "first"] = Field(
        "collect",
        description="several \\boxed{}: 'collect' reads the last group of adjacent boxes (\\boxed{2} and \\boxed{3}) "
        "as one list, as math-verify does; 'last'/'first' take one box",
    )
    anchors: bool = Field(True, description="read 'the answer is …', 'Final answer:', '####' when there is no box")
    fallback_last_math: bool = Field(
        False, description="with no box and no answer phrase, take the last $…$ span (as math-verify does)"
    )
    fallback_last_number: bool = Field(False, description="else take the last number in the text")
    reasoning_end: str | None = Field("</think>", description="only text after this tag is searched")
    answer_tag: str | None = Field(
        "answer",
        description="read the answer in the last complete <answer>…</answer> (a box inside it, an answer phrase, "
        "or its short contents); None to ignore such tags",
    )


class MathCompare(ConfigGroup):
    """How the two answers are compared: exact fast paths, then (optionally) math-verify and sympy."""

    decimal_comma: bool = Field(False, description="also read 3,5 as 3.5 when the other side is a single number")
    rel_tol: float = Field(
        1e-6,
        ge=0,
        lt=1,
        description="relative tolerance of a decimal against a value it cannot write exactly (1/3, sqrt 2)",
    )
    float_rounding: int = Field(6, ge=0, le=30, description="math-verify's float rounding in the symbolic stage")
    symbolic: bool = Field(True, description="send undecided pairs to math-verify/sympy (else they are unscorable)")


class MathRuntime(ConfigGroup):
    """Where the symbolic comparisons run and how long they may take: the worker processes and their limits."""

    timeout_s: float = Field(
        5.0, gt=0, le=600, description="hard limit for the work of one symbolic comparison, from when a worker takes it"
    )
    startup_timeout_s: float = Field(
        60.0,
        gt=0,
        le=3600,
        description="how long a comparison may wait for a ready worker (a cold start takes 5-9 s on a loaded "
        "machine); past it the sample is unscorable with a reason naming this setting",
    )
    workers: int | None = Field(
        None,
        ge=1,
        description=f"worker processes (default: ${WORKERS_ENV} when set, else the CPUs this process may run on; "
        "all instances on one host together stay within that variable's budget, else the host's CPU count + 1)",
    )
    memory_limit_mb: int | None = Field(4096, ge=256, description="address-space limit of each worker")
    cache_size: int = Field(4096, ge=0, description="parsed golds and symbolic verdicts kept (LRU)")


class MathJudge(ConfigGroup):
    """The opt-in model asked about the pairs the rules leave undecided."""

    llm_fallback: dict[str, Any] | None = Field(
        None,
        description="opt-in: a judge client config (rewardsmith.judges JudgeClientConfig fields, e.g. "
        "{backend: openai, model: ..., base_url: ...}) asked a strict yes/no on pairs the rules leave undecided",
    )
    llm_fallback_max_tokens: int = Field(4, ge=1, le=64, description="tokens the fallback judge may answer with")

    @field_validator("llm_fallback")
    @classmethod
    def _judge_config_is_valid(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            from rewardsmith.judges.clients.factory import JudgeClientConfig

            JudgeClientConfig.model_validate(value)  # a wrong field fails at construction, not mid-training
        return value


class MathScores(ConfigGroup):
    """What each verdict pays."""

    correct: float = Field(1.0, description="score of a correct answer")
    wrong: float = Field(0.0, description="score of a wrong or missing answer")
    timeout_score: float | None = Field(
        0.0,
        description="score of an answer whose comparison overran or failed while the gold alone is read within "
        "budget (the answer's own size or cost is to blame, as in \\boxed{99999999999! - 1}); None makes such "
        "answers unscorable, which a trainer ignores. An overrun the gold causes is always unscorable",
    )


class MathEquivalenceConfig(RewardConfig):
    """``math_equivalence``'s settings by stage; each setting may also be given flat (``boxed="last"``)."""

    gold_column: str = Field("solution", description="dataset column holding the reference answer")
    extract: MathExtract = Field(default_factory=MathExtract, description=MathExtract.__doc__)
    compare: MathCompare = Field(default_factory=MathCompare, description=MathCompare.__doc__)
    runtime: MathRuntime = Field(default_factory=MathRuntime, description=MathRuntime.__doc__)
    judge: MathJudge = Field(default_factory=MathJudge, description=MathJudge.__doc__)
    scores: MathScores = Field(default_factory=MathScores, description=MathScores.__doc__)


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
class MathEquivalence(Reward[MathEquivalenceConfig]):
    r"""Math answer equivalence: ``correct`` (1.0) if the final answer equals the gold, ``wrong`` (0.0) if
    it differs or is missing, ``None`` when the gold is unreadable or the comparison timed out.

    Config (:class:`MathEquivalenceConfig`, by stage; any setting may also be given flat, ``boxed="last"``):
    ``gold_column`` ("solution"); ``extract``: ``boxed`` ("collect": adjacent boxes form one list, as math-verify
    collects them; "last"/"first": one box), ``anchors``, ``fallback_last_math``, ``fallback_last_number``,
    ``reasoning_end`` ("</think>"), ``answer_tag``; ``compare``: ``decimal_comma`` (False), ``rel_tol`` (1e-6),
    ``float_rounding``, ``symbolic`` (True); ``runtime``: ``timeout_s`` (5), ``startup_timeout_s`` (60),
    ``workers`` (``$REWARDSMITH_MATH_WORKERS``, else the CPUs this process may run on), ``memory_limit_mb``,
    ``cache_size``; ``judge``: ``llm_fallback``, ``llm_fallback_max_tokens``; ``scores``: ``correct``/``wrong``,
    ``timeout_score``
    (0.0: the score of an answer whose comparison overran or failed while the gold alone is read in budget, so
    that an answer too costly to check is wrong, not unscorable; an overrun the gold causes is ``None``).
    ``timeout_s`` bounds the comparison's work only: a
    cold start waits for a worker, up to ``startup_timeout_s`` (60); a comparison that found no ready worker
    by then is always unscorable, whatever ``timeout_score``. :meth:`warm_up` starts the workers ahead.
    Timeouts are never cached. ``llm_fallback``
    (off): a judge client config; pairs the rules leave undecided, and only those, get a strict yes/no
    from that model, and the reason says so.

    Numbers: integers, fractions and decimals that can be written exactly compare exactly
    (``2000001.0`` is not ``2000000``, ``0.5`` is ``\frac12``); ``rel_tol`` applies only where a decimal
    stands for a value it cannot write exactly (``0.3333333`` for ``\frac13``, ``1.41421356`` for ``\sqrt2``).

    Returns one score per completion; :meth:`details` adds a reason naming what was extracted from
    both sides and why the verdict, plus ``gold``/``extracted`` fields.

    >>> reward = MathEquivalence()
    >>> reward([r"... so \boxed{\dfrac{1}{2}}", "The answer is 0.4"], solution=["$0.5$", "2/5"])
    [1.0, 1.0]
    """

    @property
    def gold_columns(self) -> tuple[str, ...]:
        """A misaligned column this reward reads makes a sample unscorable with a reason that names it."""
        return (self.config.gold_column,)

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self._setup()

    def _setup(self) -> None:
        self._judge: JudgeFallback | None = None  # built on first undecided pair, when llm_fallback is set
        self._golds = _LruCache(self.config.runtime.cache_size)
        self._symbolic_cache = _LruCache(self.config.runtime.cache_size)
        # Fast-path verdicts by (cleaned gold, answer, unit): a GRPO group writes the same answer many times.
        self._fast_cache = _LruCache(self.config.runtime.cache_size)
        # What a worker needs to build this reward's twin: its class and configuration, pickled once.
        self.config_blob = pickle.dumps((type(self), self.config), protocol=pickle.HIGHEST_PROTOCOL)
        # Started on first need, shared by the instances of this process with the same settings, within the host's
        # budget; pickles as its settings only, so the reward ships to spawned workers.
        lease = shared_pool(
            workers=self.config.runtime.workers or default_workers(),
            timeout_s=self.config.runtime.timeout_s,
            preload=(
                "rewardsmith.rewards.math.reward",
                "rewardsmith.rewards.math.symbolic",
                "math_verify",
                "latex2sympy2_extended",
            ),
            warm_call=(
                symbolic_verdict,
                (r"\frac{x^2-1}{2}", r"\frac{(x-1)(x+1)}{2}", self.config.compare.float_rounding),
            ),
            memory_limit_mb=self.config.runtime.memory_limit_mb,
            startup_timeout_s=self.config.runtime.startup_timeout_s,
            budget=host_budget(),
        )
        self.pool: HardTimeoutPool = lease.pool
        self._lease = lease
        self._let_go = weakref.finalize(self, lease.release)  # garbage-collected: the pool is handed back too

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "__name__": self.__name__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup()

    def warm_up(self) -> None:
        """Start every symbolic worker now and wait until they are ready (a server does this before "ready")."""
        if self.config.compare.symbolic:
            self.pool.warm_up()

    def close(self) -> None:
        """Stop the worker processes, unless other instances of this process share them (they also stop when the
        reward is garbage-collected), and the judge."""
        self._let_go.detach()
        self._lease.release()
        if self._judge is not None:
            self._judge.close()

    # -- scoring ---------------------------------------------------------------------------------
    def gold_of(self, raw: Any) -> tuple[Extraction, str | None, str | None]:
        """The gold extraction, its cleaned LaTeX and the unit cleaned off it, cached per raw value."""
        key = (type(raw).__name__, raw) if isinstance(raw, Hashable) else None
        cached = self._golds.get(key) if key is not None else None
        if cached is not None:
            return cached
        extraction = extract_gold(raw)
        clean, unit = clean_latex_with_unit(extraction.text) if extraction.text else (None, None)
        value = (extraction, clean, unit)
        if key is not None:
            self._golds.put(key, value)
        return value

    def answer_of(self, completion: str) -> Extraction:
        return extract_answer(
            completion,
            boxed=self.config.extract.boxed,
            anchors=self.config.extract.anchors,
            fallback_last_number=self.config.extract.fallback_last_number,
            reasoning_end=self.config.extract.reasoning_end,
            fallback_last_math=self.config.extract.fallback_last_math,
            answer_tag=self.config.extract.answer_tag,
        )

    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        """Scored in the workers once the pool has started (the parent only cuts and sends the batch); before,
        here, with the comparisons sent to the pool, which starts it. Both paths give the same verdicts."""
        if self.config.compare.symbolic and self.pool.live_workers:
            scored = score_in_workers(self, completions, rows)
        else:
            scored = self._compare(completions, rows, self._symbolic)
        return cast("list[RewardResult]", self._settle(scored, judge=True))  # judge=True settles every sample

    def _compare(
        self,
        completions: list[Any],
        rows: list[dict[str, Any]],
        symbolic: Callable[[list[tuple[str, str]]], list[Verdict]],
    ) -> list[Scored]:
        """Extraction, the fast paths and the symbolic stage (``symbolic``: the verdicts of a list of parts)."""
        results: list[Scored | None] = []
        compared: dict[int, tuple[Extraction, Extraction, str, Verdict]] = {}
        units: dict[int, str | None] = {}
        for index, (completion, row) in enumerate(zip(completions, rows, strict=True)):
            result, pending, units[index] = self._first_stage(completion, row)
            results.append(result)
            if pending is not None:
                compared[index] = pending
        waiting = {i: c for i, c in compared.items() if c[3].parts and self.config.compare.symbolic}
        if waiting:
            parts = list(dict.fromkeys(part for *_, verdict in waiting.values() for part in verdict.parts))
            oracle = dict(zip(parts, symbolic(parts), strict=True))
            combined: dict[tuple[str, str, str | None], Verdict] = {}  # one combination per distinct answer
            for index, (gold, answer, gold_clean, _) in waiting.items():
                key = (gold_clean, answer.text or "", units[index])
                if key not in combined:
                    combined[key] = fast_verdict(
                        gold_clean,
                        answer.text or "",
                        self.config.compare.rel_tol,
                        decimal_comma=self.config.compare.decimal_comma,
                        oracle=oracle,
                        gold_unit=units[index],
                    )
                compared[index] = (gold, answer, gold_clean, combined[key])
        for index, pending in compared.items():
            results[index] = pending
        assert all(r is not None for r in results)
        return cast("list[Scored]", results)  # every slot is a result or a comparison (asserted above)

    def _settle(self, scored: list[Scored], *, judge: bool) -> list[Scored]:
        """Comparisons made results: the undecided ones asked to the judge fallback first when it is configured
        (``judge=False``, in a worker: they stay comparisons, for the parent to ask)."""
        compared = {i: s for i, s in enumerate(scored) if isinstance(s, tuple)}
        unsettled = [i for i, c in compared.items() if c[3].equal is None]
        if unsettled and self.config.judge.llm_fallback is not None:
            if not judge:
                asked = set(unsettled)
                return [s if i in asked else self._settled(s) for i, s in enumerate(scored)]
            judged = self._fallback().judge(
                [(compared[i][2], compared[i][1].text or "") for i in unsettled], [compared[i][3] for i in unsettled]
            )
            for index, verdict in zip(unsettled, judged, strict=True):
                gold, answer, gold_clean, _ = compared[index]
                compared[index] = (gold, answer, gold_clean, verdict)
        return [self._settled(compared.get(i, s)) for i, s in enumerate(scored)]

    def _settled(self, scored: Scored) -> RewardResult:
        if not isinstance(scored, tuple):
            return scored
        gold, answer, gold_clean, verdict = scored
        if verdict.equal is None and verdict.parts and not self.config.compare.symbolic:
            verdict = Verdict(None, "needs symbolic comparison, which is off")
        verdict = settle_failure(verdict, gold_clean, self.pool, self._symbolic_cache)  # whose fault an overrun is
        return self._result(gold, answer, verdict)

    def _fallback(self) -> JudgeFallback:
        return build_once(
            self,
            "_judge",
            lambda: JudgeFallback(self.config.judge.llm_fallback or {}, self.config.judge.llm_fallback_max_tokens),
        )

    def _first_stage(
        self, completion: Any, row: dict[str, Any]
    ) -> tuple[RewardResult | None, tuple[Extraction, Extraction, str, Verdict] | None, str | None]:
        """A result when settled without comparing (no gold, no answer), else what the comparison found;
        and the gold's unit."""
        if self.config.gold_column not in row:
            return RewardResult.unscorable(f"no gold: column {self.config.gold_column!r} missing"), None, None
        gold, gold_clean, unit = self.gold_of(row[self.config.gold_column])
        if gold_clean is None:
            return RewardResult.unscorable(f"gold unreadable: {gold.describe()}"), None, None
        if not isinstance(completion, str):
            return RewardResult.unscorable(f"completion is {type(completion).__name__}, not text"), None, None
        answer = self.answer_of(completion)
        if answer.text is None:
            return self._result(gold, answer, Verdict(False, "no final answer found")), None, None
        key = (gold_clean, answer.text, unit)
        verdict = self._fast_cache.get(key)
        if verdict is None:
            verdict = fast_verdict(
                gold_clean,
                answer.text,
                self.config.compare.rel_tol,
                decimal_comma=self.config.compare.decimal_comma,
                gold_unit=unit,
            )
            self._fast_cache.put(key, verdict)
        return None, (gold, answer, gold_clean, verdict), unit

    def _symbolic(
        self, pairs: list[tuple[str, str]], known: dict[tuple[str, str], Verdict] | None = None
    ) -> list[Verdict]:
        """Each pair compared in a pool worker, unless cached or ``known`` (verdicts already established for this
        batch, such as a comparison that overran in a worker)."""
        verdicts: list[Verdict | None] = [(known or {}).get(p) or self._symbolic_cache.get(p) for p in pairs]
        todo = [i for i, v in enumerate(verdicts) if v is None]
        outcomes = self.pool.map(
            symbolic_verdict,
            [(*pairs[i], self.config.compare.float_rounding, self.config.compare.rel_tol) for i in todo],
        )
        for i, outcome in zip(todo, outcomes, strict=True):
            verdicts[i] = self.verdict_of(outcome)
            if outcome.status is CallStatus.OK:
                self._symbolic_cache.put(pairs[i], outcome.value)  # computed to the end: the same next time
        return cast("list[Verdict]", verdicts)  # every uncached slot is in todo, and each outcome fills its slot

    def verdict_of(self, outcome: CallOutcome) -> Verdict:
        """The verdict of a symbolic comparison from the outcome of the pool call that ran it. Timeouts are not
        cached: an overrun under load may succeed later."""
        if outcome.status is CallStatus.OK:
            return cast("Verdict", outcome.value)
        if outcome.status is CallStatus.TIMEOUT and outcome.started:
            return Verdict(None, f"timeout: symbolic comparison exceeded {self.config.runtime.timeout_s:g} s", True)
        if outcome.status is CallStatus.TIMEOUT:
            _, starved, why = outcome.error.partition(" s: ")  # the host's worker budget was held by others
            startup = self.config.runtime.startup_timeout_s
            return Verdict(
                None,
                f"timeout: no symbolic worker ready within startup_timeout_s={startup:g} s"
                + (f": {why}" if starved else ""),
            )
        return Verdict(
            None, f"symbolic comparison failed ({outcome.status.value}: {outcome.error})", failed=outcome.started
        )

    def _result(self, gold: Extraction, answer: Extraction, verdict: Verdict) -> RewardResult:
        score = (
            None
            if verdict.equal is None
            else (self.config.scores.correct if verdict.equal else self.config.scores.wrong)
        )
        reason = f"gold {gold.describe()}; answer {answer.describe()}; {verdict.why}"
        if verdict.answer_to_blame:
            score = self.config.scores.timeout_score
            shown = "None" if score is None else f"{score:g}"
            reason += f" (scored timeout_score={shown})"
        return RewardResult(score=score, reason=reason, gold=gold.text, extracted=answer.text)
