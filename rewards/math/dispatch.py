"""Scoring in the worker processes: the parent cuts a batch into chunks and sends them out; each worker runs the
whole per-completion pipeline (extraction, the fast paths, the symbolic stage) on its chunk.

Why: when extraction and the fast paths ran in the parent (about 1 ms per completion) and only the symbolic
comparisons went to the pool, the parent was the bottleneck and throughput stopped growing at about 4 workers.
Here the parent's share per completion is pickling it out and its result back.

Chunks keep the completions of one gold together (a GRPO group), so an answer written several times in a group is
compared once, as in the parent; a chunk is large enough that its round trip is small next to its work, and there
are a few chunks per worker, so one slow chunk does not leave the others idle.

The hard timeout holds per comparison, as when each went to the pool on its own: the worker calls
:func:`rewardsmith.hard_timeout.report` before each symbolic comparison it has not cached (and once after the
last), which restarts the call's clock, so every comparison gets ``timeout_s`` of work and an overrun is pinned
on the comparison that ran. A chunk that does not come back whole (an overrun, a crash, an error, no worker ready
in time) is scored again in the parent by the per-comparison path, told the verdict of the comparison that
overran: every verdict is the one that path gives.
"""

from __future__ import annotations

import math
import os
import pickle
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from rewardsmith.hard_timeout import CallOutcome, CallStatus, available_cpus, report
from rewardsmith.rewards.math.verdict import Verdict
from rewardsmith.worker_budget import HostBudget

#: The reward and its per-completion result (``rewards.math.reward.MathEquivalence`` and ``Scored``), named here
#: without importing that module, which imports this one: the worker gets the class inside its pickled blob.
MathEquivalence = Any
Scored = Any

#: Environment variable with the default worker count of every ``math_equivalence`` in this process.
WORKERS_ENV = "REWARDSMITH_MATH_WORKERS"
#: Fewest completions in a chunk (a GRPO group of 8): below it the round trip is a visible share of the work.
MIN_CHUNK = 8
#: Chunks per worker when the batch is large: a slow chunk then holds up one worker's share, not the batch.
CHUNKS_PER_WORKER = 2
#: Reward configurations a worker keeps a scorer (and its caches) for.
SCORERS_KEPT = 8

Part = tuple[str, str]


def default_workers() -> int:
    """Worker processes of a ``math_equivalence`` without ``workers`` set: ``REWARDSMITH_MATH_WORKERS`` when set
    (the whole host budget, for an instance alone on the host), else the CPUs this process may run on (its
    affinity mask). Several instances on one host share the budget of :func:`host_budget` whatever they ask."""
    declared = _declared_workers()
    return available_cpus() if declared is None else declared


def host_budget() -> HostBudget:
    """The math worker processes every process on this host shares: ``REWARDSMITH_MATH_WORKERS`` when set, else the
    host's CPU count plus one, so that an instance alone on the host keeps a worker per core and its idle spare
    (not this process's affinity: instances pinned to different cores still share one machine)."""
    declared = _declared_workers()
    if declared is not None:
        return HostBudget("math", declared, f"{WORKERS_ENV}={declared}")
    cpus = os.cpu_count() or 1
    return HostBudget("math", cpus + 1, f"the host's {cpus} CPUs and a spare; set {WORKERS_ENV} to declare it")


def _declared_workers() -> int | None:
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return None
    try:
        workers = int(raw)
    except ValueError:
        workers = 0
    if workers < 1:
        from rewardsmith.reward import ConfigError

        raise ConfigError(f"{WORKERS_ENV}={raw!r}: expected a whole number of worker processes, at least 1")
    return workers


def plan_chunks(rows: Sequence[dict[str, Any]], gold_column: str, workers: int) -> list[list[int]]:
    """Indices of the batch cut into chunks: each gold's completions together (in batch order), groups packed
    up to ``max(MIN_CHUNK, n / (CHUNKS_PER_WORKER * workers))`` completions, a group never split."""
    groups: dict[Hashable, list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(_gold_key(row, gold_column, index), []).append(index)
    target = max(MIN_CHUNK, math.ceil(len(rows) / (CHUNKS_PER_WORKER * max(1, workers))))
    chunks: list[list[int]] = []
    current: list[int] = []
    for group in groups.values():
        if current and len(current) + len(group) > target:
            chunks.append(current)
            current = []
        current.extend(group)
    if current:
        chunks.append(current)
    return chunks


def _gold_key(row: dict[str, Any], gold_column: str, index: int) -> Hashable:
    if gold_column not in row:
        return ("missing",)
    raw = row[gold_column]
    try:
        hash(raw)
    except TypeError:  # an unhashable gold (a list): a group of its own
        return ("unhashable", index)
    return ("gold", type(raw).__name__, raw)


def score_in_workers(reward: MathEquivalence, completions: list[Any], rows: list[dict[str, Any]]) -> list[Scored]:
    """Every completion scored as :meth:`MathEquivalence._compare` scores it, the work done in ``reward.pool``."""
    column = reward.config.gold_column
    slim = [{column: row[column]} if column in row else {} for row in rows]  # the gold is all a worker reads
    chunks = plan_chunks(slim, column, reward.pool.workers)
    blob = reward.config_blob

    def run(chunk: list[int]) -> tuple[CallOutcome, Any]:
        reports: list[Any] = []
        outcome = reward.pool.call(
            score_chunk,
            blob,
            [completions[i] for i in chunk],
            [slim[i] for i in chunk],
            timeout_s=reward.config.runtime.timeout_s,
            on_report=reports.append,
        )
        return outcome, reports[-1] if reports else None

    if len(chunks) == 1:
        runs = [run(chunks[0])]
    else:
        with ThreadPoolExecutor(max_workers=min(reward.pool.workers, len(chunks))) as executor:
            runs = list(executor.map(run, chunks))

    scored: list[Scored | None] = [None] * len(completions)
    retry: list[int] = []  # chunks the worker did not finish: scored again by the per-comparison path
    known: dict[Part, Verdict] = {}  # what those calls established: the verdict of each comparison that overran
    never_ran: list[int] = []  # chunks no worker took: their comparisons cannot be sent either
    never_ran_verdict: Verdict | None = None
    for chunk, (outcome, last_report) in zip(chunks, runs, strict=True):
        if outcome.ok:
            answers, learned = outcome.value
            for index, answer in zip(chunk, answers, strict=True):
                scored[index] = answer
            for part, verdict in learned:
                reward._symbolic_cache.put(part, verdict)
        elif not outcome.started:
            never_ran.extend(chunk)
            never_ran_verdict = reward.verdict_of(outcome)
        else:
            retry.extend(chunk)
            if isinstance(last_report, tuple) and outcome.status in (CallStatus.TIMEOUT, CallStatus.CRASHED):
                known[last_report] = reward.verdict_of(outcome)  # the comparison that was running
    for indices, symbolic in (
        (retry, lambda parts: reward._symbolic(parts, known)),
        (never_ran, lambda parts: [cast(Verdict, never_ran_verdict)] * len(parts)),
    ):
        if indices:
            again = reward._compare([completions[i] for i in indices], [rows[i] for i in indices], symbolic)
            for index, answer in zip(indices, again, strict=True):
                scored[index] = answer
    assert all(s is not None for s in scored)
    return scored  # every index is in one chunk, and each chunk filled its slots


# -- worker side ---------------------------------------------------------------------------------------------
_SCORERS: OrderedDict[bytes, MathEquivalence] = OrderedDict()


def score_chunk(
    config_blob: bytes, completions: list[Any], rows: list[dict[str, Any]]
) -> tuple[list[Scored], list[tuple[Part, Verdict]]]:
    """In a worker: the chunk scored as in the parent (without the judge fallback, which the parent asks), and the
    symbolic verdicts computed to the end on the way, for the parent's cache."""
    scorer = _scorer(config_blob)
    learned: list[tuple[Part, Verdict]] = []
    compared = scorer._compare(completions, rows, lambda parts: _compare_here(scorer, parts, learned))
    return scorer._settle(compared, judge=False), learned


def _scorer(config_blob: bytes) -> MathEquivalence:
    """This worker's reward for one configuration, kept with its caches (parsed golds, symbolic verdicts)."""
    scorer = _SCORERS.get(config_blob)
    if scorer is None:
        reward_class, config = pickle.loads(config_blob)
        scorer = _SCORERS[config_blob] = reward_class(config)
        while len(_SCORERS) > SCORERS_KEPT:
            _SCORERS.popitem(last=False)
    _SCORERS.move_to_end(config_blob)
    return scorer


def _compare_here(scorer: MathEquivalence, parts: list[Part], learned: list[tuple[Part, Verdict]]) -> list[Verdict]:
    """The symbolic stage run in this worker, one comparison after another, each announced to the caller first (its
    clock restarts, and an overrun is pinned on it). Verdicts as :meth:`MathEquivalence.verdict_of` gives them."""
    from rewardsmith.rewards.math.symbolic import symbolic_verdict

    verdicts: list[Verdict] = []
    announced = False
    for part in parts:
        verdict = scorer._symbolic_cache.get(part)
        if verdict is None:
            report(part)
            announced = True
            verdict, finished = _symbolic_or_failure(scorer, symbolic_verdict, part)
            if finished:
                scorer._symbolic_cache.put(part, verdict)  # computed to the end: the same next time
                learned.append((part, verdict))
        verdicts.append(verdict)
    if announced:
        report(None)  # the comparisons are over: what follows is the chunk's own work again
    return verdicts


def _symbolic_or_failure(scorer: MathEquivalence, fn: Callable[..., Verdict], part: Part) -> tuple[Verdict, bool]:
    """The comparison's verdict and True, or, when it raised, the verdict the pool path gives a call that raised and
    False (not cached: it says nothing about the pair)."""
    try:
        return fn(*part, scorer.config.compare.float_rounding, scorer.config.compare.rel_tol), True
    except BaseException as exc:  # as a worker reports a call that raised (SystemExit and MemoryError included)
        error = f"{type(exc).__name__}: {exc}"[:2000]
        return scorer.verdict_of(CallOutcome(CallStatus.ERROR, error=error)), False
