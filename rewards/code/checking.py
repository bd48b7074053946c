"""The trusted stage of Python assert tests and the rounds that decide program tests: a checker the reward holds.

The trusted stage runs in processes that never load a solution: assert glue over the values the solution's
process reported, and program tests over the solution's answers so far. A program test whose answers are
incomplete reports the calls it still needs; those go (arguments only) to a run of the solution
(:func:`requests.python_answer_request`), whose answers the host validates before the next round. Why this shape:
backends only offer one-shot runs, and the host is the only channel that lets the test and the solution live in
different processes (see :mod:`.harness`).

Failures are charged to whoever caused them: a trusted run that fails on a sample's values (timeout, memory, an
oversized reply) fails that sample's tests (0.0 with the reason); several samples share a trusted run, and a
shared run that fails is retried one sample per run, so one sample never unscores another; only a sandbox error,
or a test that fails before any value of the solution's reached it, is ``None``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.rewards.code import harness
from rewardsmith.rewards.code.case_formats import TestSuite
from rewardsmith.sandboxes.base import Limits, RunRequest, RunResult
from rewardsmith.types import RewardResult

DIVERGED = (
    "the test computed different inputs in the trusted replay than the solution was asked for, round after round (a"
    " test that depends on time, the environment or unseeded state, or a solution that is not deterministic)"
)
#: replies of the trusted stage and of answer runs list many calls: their output cap
STAGE_OUTPUT_BYTES = 16 << 20
#: first-round results (which depend on the test alone) kept per reward instance
FIRST_ROUND_CACHE = 4096


@dataclass
class ProgramState:
    """A program test across rounds: the calls asked so far (in order) and the solution's answers to them."""

    queries: list[list] = field(default_factory=list)
    table: dict[str, dict] = field(default_factory=dict)
    rounds: int = 0


@dataclass
class Sample:
    """One completion in flight: its suite, program and per-test outcomes (True/False/None=infra)."""

    suite: TestSuite
    code: str
    program: str | bytes = ""
    outcomes: list[bool | None] = field(default_factory=list)
    notes: dict[int, str] = field(default_factory=dict)
    final: RewardResult | None = None
    plans: list[harness.AssertPlan | harness.ProgramPlan] = field(default_factory=list)
    #: (test index, plan or checker, data): values for glue, the answers table for a program, stdout for a checker
    pending_checks: list[tuple[int, Any, Any]] = field(default_factory=list)
    programs: dict[int, ProgramState] = field(default_factory=dict)
    undecidable: dict[int, str] = field(default_factory=dict)
    untrusted: str | None = None
    shape: str = ""
    #: call tests: the LeetCode/LiveCodeBench import prelude is run before the solution (:mod:`.preludes`)
    prelude: str = ""

    def program_plan(self, index: int) -> harness.ProgramPlan:
        """The plan of test ``index``, which answer rounds and whole runs only ever ask of a program test."""
        plan = self.plans[index]
        assert isinstance(plan, harness.ProgramPlan), f"test {index} is not a program test"
        return plan


class TrustedChecker:
    """Decides the checks of a batch's samples: trusted stages and answer rounds, run through the reward's sandbox.

    It is given what it uses and nothing else: the reward's config (its sandbox settings), ``run`` (a batch of
    requests to results on the reward's sandbox) and ``limits`` (the sandbox limits of a run given its seconds).
    It keeps the first-round results of program tests, which depend on the test alone, across batches.
    """

    def __init__(
        self,
        config: Any,
        run: Callable[[list[RunRequest]], list[RunResult]],
        limits: Callable[[float], Limits],
    ) -> None:
        self.config = config
        self._run = run
        self._limits = limits
        self._first_rounds: OrderedDict[tuple, dict] = OrderedDict()

    def run_checks(self, samples: list[Sample]) -> None:
        """Trusted stage, then answer runs for the calls program tests asked, until every check is decided."""
        while True:
            live = [s for s in samples if s.final is None and s.pending_checks]
            if not live:
                return
            asks = self._trusted_round(live)
            if not asks:
                return
            self._answer_round(asks)

    def _stage_limits(self, seconds: float) -> Limits:
        return self._limits(seconds).model_copy(update={"output_bytes": STAGE_OUTPUT_BYTES})

    # -- rounds ----------------------------------------------------------------------------------
    def _trusted_round(self, samples: list[Sample]) -> list[tuple[Sample, int]]:
        """One trusted stage over every pending check; returns the program tests that asked for answers."""
        cached: dict[tuple[int, int], dict] = {}
        for sample in samples:
            for index, plan, data in sample.pending_checks:
                if isinstance(plan, harness.ProgramPlan) and not data and self._first_key(plan) in self._first_rounds:
                    cached[(id(sample), index)] = self._first_rounds[self._first_key(plan)]
        shipped = {id(s): [c for c in s.pending_checks if (id(s), c[0]) not in cached] for s in samples}
        results = self._stage([s for s in samples if shipped[id(s)]], shipped)
        asks: list[tuple[Sample, int]] = []
        for sample in samples:
            checks, sample.pending_checks = sample.pending_checks, []
            outcome = results.get(id(sample))
            shipped_results = iter(outcome[0]) if outcome and outcome[0] is not None else None
            pure = outcome is not None and outcome[3]
            for index, plan, data in checks:
                if (id(sample), index) in cached:
                    result = cached[(id(sample), index)]
                elif shipped_results is None:
                    assert outcome is not None  # this sample shipped checks, so the stage reported on it
                    self._stage_failed(sample, index, outcome[1], outcome[2])
                    continue
                else:
                    result = next(shipped_results)
                    if isinstance(plan, harness.ProgramPlan) and not data and pure:
                        self._remember_first(plan, result)
                if self._apply(sample, index, plan, result):
                    asks.append((sample, index))
        return asks

    def _first_key(self, plan: harness.ProgramPlan) -> tuple:
        return (plan.replay, plan.seed, plan.modules)

    def _remember_first(self, plan: harness.ProgramPlan, result: dict) -> None:
        """Keep a first-round result for every later sample of the same test. Only results of a trusted run that
        carried no solution value at all are kept (``pure``): the cached value outlives the sample and its sandbox,
        so nothing a solution sent or did may have taken part in computing it."""
        self._first_rounds[self._first_key(plan)] = result
        while len(self._first_rounds) > FIRST_ROUND_CACHE:
            self._first_rounds.popitem(last=False)

    def _apply(self, sample: Sample, index: int, plan: Any, result: dict) -> bool:
        """Record one check's result; True when the program test asked for answers (another round)."""
        if "passed" in result:
            sample.outcomes[index] = result["passed"]
            if not result["passed"]:
                sample.notes.setdefault(index, "assert failed")
            return False
        if "errored" in result:  # the test raised something other than AssertionError (e.g. the solution's error)
            sample.outcomes[index] = False
            sample.notes.setdefault(index, f"test errored: raised {result['errored']} (not a failed assertion)")
            return False
        if "undecidable" in result:
            sample.undecidable[index] = result["undecidable"]
            return False
        state = sample.programs.get(index)
        if state is None:  # only program tests ask; anything else is a malformed reply of the trusted stage
            self._stage_failed(sample, index, "malformed trusted-stage result", provoked=False)
            return False
        known = {q[0] for q in state.queries}
        fresh = [q for q in result["asked"] if q[0] not in known]
        state.rounds += 1
        if not fresh or state.rounds > harness.MAX_ROUNDS:
            sample.outcomes[index] = False
            sample.notes[index] = DIVERGED
            return False
        state.queries.extend(fresh)
        return True

    def _stage_failed(self, sample: Sample, index: int, why: str, provoked: bool) -> None:
        if provoked:
            sample.outcomes[index] = False
            sample.notes[index] = f"trusted check stage failed on this sample's values: {why}"
        elif sample.final is None:
            sample.final = RewardResult.unscorable(f"assert checking stage failed: {why}")

    def _answer_round(self, asks: list[tuple[Sample, int]]) -> None:
        """Each program test that asked gets one run of its solution answering all its calls so far, in order."""
        limits = self._stage_limits(self.config.sandbox.timeout_s)
        nonces = [harness.new_nonce() for _ in asks]
        requests = [
            harness.python_answer_request(s.code, s.program_plan(i), s.programs[i].queries, nonce, limits)
            for (s, i), nonce in zip(asks, nonces, strict=True)
        ]
        for (sample, index), nonce, result in zip(asks, nonces, self._run(requests), strict=True):
            if result.infrastructure_failure:
                sample.outcomes[index] = None
                sample.notes[index] = f"sandbox failure: {result.message}"
                continue
            state = sample.programs[index]
            record, why = harness.single_record(result, nonce)
            if record is None or "answers" not in record:
                sample.outcomes[index] = False
                sample.notes[index] = why or harness.error_text(record, "no answers")
                continue
            try:
                state.table = harness.decode_answers(record["answers"], {q[0] for q in state.queries})
            except harness.PlainValueError as exc:
                sample.outcomes[index] = False
                sample.notes[index] = str(exc)
                continue
            sample.pending_checks.append((index, sample.plans[index], state.table))

    # -- one trusted stage -----------------------------------------------------------------------
    def _stage(
        self, samples: list[Sample], shipped: dict[int, list]
    ) -> dict[int, tuple[list[dict] | None, str, bool, bool]]:
        """Run the shipped checks of ``samples``, several samples per process; a failed shared process is retried
        one sample per process. Returns per sample ``(results, why, provoked, pure)``; ``pure``: the process that
        computed them got no value of any solution."""
        if not samples:
            return {}
        size = max(1, min(self.config.sandbox.check_batch, -(-len(samples) // self.config.sandbox.concurrency)))
        groups = [samples[i : i + size] for i in range(0, len(samples), size)]
        outcomes: dict[int, tuple[list[dict] | None, str, bool, bool]] = {}
        retry: list[list[Sample]] = []
        for group, (results, why, provoked) in zip(groups, self._stage_groups(groups, shipped), strict=True):
            if results is None and len(group) > 1:
                retry.extend([sample] for sample in group)
                continue
            self._split(group, shipped, results, why, provoked, outcomes)
        for group, (results, why, provoked) in zip(retry, self._stage_groups(retry, shipped), strict=True):
            self._split(group, shipped, results, why, provoked, outcomes)
        return outcomes

    @staticmethod
    def _split(group, shipped, results, why, provoked, outcomes) -> None:
        position = 0
        pure = not any(data for sample in group for _, _, data in shipped[id(sample)])
        for sample in group:
            count = len(shipped[id(sample)])
            part = None if results is None else results[position : position + count]
            outcomes[id(sample)] = (part, why, provoked, pure)
            position += count

    def _stage_groups(
        self, groups: list[list[Sample]], shipped: dict[int, list]
    ) -> list[tuple[list[dict] | None, str, bool]]:
        nonces = [harness.new_nonce() for _ in groups]
        limits = self._stage_limits(max(10.0, self.config.sandbox.timeout_s))
        requests = [
            harness.python_check_request(
                [(plan, data) for s in group for _, plan, data in shipped[id(s)]], nonce, limits
            )
            for group, nonce in zip(groups, nonces, strict=True)
        ]
        outcomes: list[tuple[list[dict] | None, str, bool]] = []
        for group, nonce, result in zip(groups, nonces, self._run(requests), strict=True):
            expected = sum(len(shipped[id(s)]) for s in group)
            # the solution's values took part when any check carries them (glue values, or a non-empty table)
            provoked = any(bool(data) for s in group for _, _, data in shipped[id(s)])
            if result.infrastructure_failure:
                outcomes.append((None, f"sandbox failure: {result.message}", False))
                continue
            record, why = harness.single_record(result, nonce)
            results = harness.decode_check_results(record, expected)
            if results is None:
                outcomes.append((None, why or "bad record", provoked))
            else:
                outcomes.append((results, "", False))
        return outcomes
