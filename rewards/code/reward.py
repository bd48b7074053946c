"""``code_tests``: run the completion's program against the sample's tests in a sandbox.

Formula: ``score = passed / total`` (``scoring="fraction"``) or ``1.0 if passed == total else 0.0``
(``scoring="all_or_nothing"``). No code block → 0.0. Unparseable tests, or any sandbox/infrastructure failure
→ ``None`` (never 0.0: a broken sandbox must not look like a wrong answer).

Pipeline: extract the last fenced block in the language (:mod:`.code_extract`) → parse the ``tests`` column
(:mod:`.code_tests_format`) → one sandboxed process per test (:mod:`.code_harness`; C++ is compiled once per
sample and the binary reused) → verdicts decided in this process from what the sandbox reported.

``untrusted_asserts`` (default ``"unscorable"``): a test that can only be decided inside the solution's own
process (it checks side effects or reaches names through ``eval``/``getattr``; see :mod:`.code_harness`)
could be forged by the solution, so by default its sample scores ``None`` with ``trusted: false`` in the
reason. ``"run"`` scores it anyway and marks the result ``trusted=False`` (reason ends ``(trusted: false: ...)``).

>>> from rewardkit import get_reward
>>> reward = get_reward("code_tests")
>>> tests = {"language": "python", "fn_name": "add", "calls": [{"args": [1, 2], "expected": 3}]}
>>> reward(["```python\\ndef add(a, b):\\n    return a + b\\n```"], tests=[tests])
[1.0]
>>> humaneval = {"test": "def check(candidate):\\n    assert all(candidate(i, 1) == i + 1 for i in range(3))\\n",
...              "entry_point": "add"}
>>> reward(["```python\\ndef add(a, b):\\n    return a - b\\n```"], tests=[humaneval])
[0.0]
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field, model_validator

from rewardkit.registry import register_reward
from rewardkit.reward import Reward, RewardConfig
from rewardkit.rewards.code import harness
from rewardkit.rewards.code.extract import extract_code
from rewardkit.rewards.code.test_formats import BadTestsFormat, TestSuite, normalise_language, parse_tests
from rewardkit.sandboxes.base import Limits, RunRequest, RunResult, RunStatus
from rewardkit.types import RewardResult


class CodeTestsConfig(RewardConfig):
    tests_column: str = Field("tests", description="dataset column holding each sample's tests (dict or JSON)")
    language: str = Field("python", description="language when the tests do not name one")
    code_block: Literal["last", "first", "raw"] = Field("last", description="which fenced block; raw = whole text")
    allow_untagged_block: bool = Field(True, description="fall back to a block without a language tag")
    scoring: Literal["fraction", "all_or_nothing"] = "fraction"
    timeout_s: float = Field(5.0, gt=0, description="wall and CPU limit of each test's process")
    memory_mb: int = Field(512, gt=0)
    compile_timeout_s: float = Field(60.0, gt=0)
    max_tests: int | None = Field(None, gt=0, description="use only the first N tests of each sample")
    backend: Literal["local", "docker", "remote"] = "local"
    base_url: str | None = Field(None, description="remote backend URL (SandboxFusion-compatible)")
    backend_options: dict[str, Any] = Field(default_factory=dict, description="extra backend constructor options")
    concurrency: int = Field(4, gt=0, description="sandbox runs in flight")
    untrusted_asserts: Literal["unscorable", "run"] = Field(
        "unscorable",
        description="asserts decidable only next to the solution (forgeable): None, or run and mark trusted=false",
    )

    @model_validator(mode="after")
    def _check(self) -> CodeTestsConfig:
        normalise_language(self.language)
        if self.backend == "remote" and not (self.base_url or self.backend_options.get("base_url")):
            raise ValueError("backend 'remote' needs base_url")
        return self


@dataclass
class _Sample:
    """One completion in flight: its suite, program and per-test outcomes (True/False/None=infra)."""

    suite: TestSuite
    code: str
    program: str | bytes = ""
    outcomes: list[bool | None] = field(default_factory=list)
    notes: dict[int, str] = field(default_factory=dict)
    final: RewardResult | None = None
    plans: list[harness.AssertPlan | harness.ProgramPlan] = field(default_factory=list)
    pending_checks: list[tuple[int, harness.AssertPlan | harness.ProgramPlan, Any]] = field(default_factory=list)
    untrusted: str | None = None


@register_reward("code_tests")
class CodeTests(Reward):
    """Fraction (or all) of a sample's tests passed by the completion's code, run in a sandbox.

    Config: see :class:`CodeTestsConfig` (``backend="local"`` by default; ``"docker"``/``"remote"`` with
    ``base_url``). The backend is opened lazily and never pickled, so the reward ships to spawned workers.
    """

    name = "code_tests"
    Config = CodeTestsConfig

    @property
    def required_columns(self) -> tuple[str, ...]:  # type: ignore[override]
        """A misaligned column this reward reads makes a sample unscorable with a reason that names it."""
        return (self.config.tests_column,)  # type: ignore[attr-defined]

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self._backend = None
        self._backend_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_backend"] = None
        del state["_backend_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._backend_lock = threading.Lock()

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    # -- scoring ---------------------------------------------------------------------------------
    def score_batch(self, completions: list[str | None], rows: list[dict[str, Any]]) -> list[RewardResult]:
        samples = [self._start_sample(text, row) for text, row in zip(completions, rows, strict=True)]
        live = [s for s in samples if isinstance(s, _Sample)]
        if live:
            self._compile(live)
            self._run_tests(live)
            self._run_checks(live)
        return [s if isinstance(s, RewardResult) else self._verdict(s) for s in samples]

    def _start_sample(self, text: str | None, row: dict[str, Any]) -> _Sample | RewardResult:
        if text is None:
            return RewardResult.unscorable("completion is not text")
        column = self.config.tests_column
        if row.get(column) is None:
            return RewardResult.unscorable(f"no tests in column {column!r}")
        try:
            suite = parse_tests(row[column], self.config.language)
        except BadTestsFormat as exc:
            return RewardResult.unscorable(f"tests unusable: {exc}")
        if self.config.max_tests:
            suite = TestSuite(suite.language, suite.kind, suite.tests[: self.config.max_tests], suite.fn_name)
        code = extract_code(text, suite.language, self.config.code_block, self.config.allow_untagged_block)
        if code is None:
            return RewardResult(score=0.0, reason=f"no {suite.language} code block", passed=0, total=len(suite))
        sample = _Sample(suite, code, program=code, outcomes=[False] * len(suite))
        if suite.kind == "asserts":
            try:
                sample.plans = [harness.plan_assert(t) for t in suite.tests]
            except (ValueError, SyntaxError, RecursionError) as exc:
                return RewardResult.unscorable(f"tests unusable: {exc}")
            untrusted = [p.untrusted for p in sample.plans if isinstance(p, harness.ProgramPlan) and p.untrusted]
            if untrusted:
                if self.config.untrusted_asserts == "unscorable":
                    return RewardResult.unscorable(
                        f"test decidable only next to the solution (trusted: false): {untrusted[0]};"
                        " set untrusted_asserts='run' to score it anyway",
                        trusted=False,
                    )
                sample.untrusted = untrusted[0]
        return sample

    def _compile(self, samples: list[_Sample]) -> None:
        cpp = [s for s in samples if s.suite.language == "cpp"]
        if not cpp:
            return
        limits = self._limits(self.config.compile_timeout_s, memory_mb=max(self.config.memory_mb, 2048))
        results = self._run([harness.cpp_compile_request(s.code, limits) for s in cpp])
        for sample, result in zip(cpp, results, strict=True):
            if result.infrastructure_failure:
                sample.final = RewardResult.unscorable(f"sandbox failure while compiling: {result.message}")
            elif not result.ok:
                error = result.stderr.decode("utf-8", "replace")[-300:]
                sample.final = RewardResult(
                    score=0.0, reason=f"compile error: {error}", passed=0, total=len(sample.suite)
                )
            elif "solution" not in result.files:
                sample.final = RewardResult.unscorable("compiler reported success but produced no binary")
            else:
                sample.program = result.files["solution"]

    def _run_tests(self, samples: list[_Sample]) -> None:
        limits = self._limits(self.config.timeout_s)
        jobs: list[tuple[_Sample, int, str, RunRequest]] = []
        for sample in samples:
            if sample.final is not None:
                continue
            suite = sample.suite
            for index, test in enumerate(suite.tests):
                nonce = harness.new_nonce()
                if suite.kind == "stdio":
                    request = harness.stdio_request(suite.language, sample.program, test, limits)
                elif suite.kind == "calls":
                    request = harness.python_call_request(sample.code, suite.fn_name, test, nonce, limits)
                elif isinstance(plan := sample.plans[index], harness.ProgramPlan):
                    whole = plan.untrusted is not None
                    request = harness.python_program_request(sample.code, plan, nonce, limits, whole)
                else:
                    request = harness.python_exprs_request(sample.code, plan, nonce, limits)
                jobs.append((sample, index, nonce, request))
        results = self._run([job[3] for job in jobs])
        for (sample, index, nonce, _), result in zip(jobs, results, strict=True):
            self._judge(sample, index, nonce, result)

    def _judge(self, sample: _Sample, index: int, nonce: str, result: RunResult) -> None:
        if result.infrastructure_failure:
            sample.outcomes[index] = None
            sample.notes[index] = f"sandbox failure: {result.message}"
            return
        suite = sample.suite
        test = suite.tests[index]
        if suite.kind == "stdio":
            passed = result.ok and harness.stdout_matches(result.stdout, test.output)
            sample.outcomes[index] = passed
            if not passed:
                sample.notes[index] = "wrong output" if result.ok else result.status.value
            return
        record, why = harness.single_record(result, nonce)
        plan = sample.plans[index] if suite.kind == "asserts" else None
        if isinstance(plan, harness.ProgramPlan):
            self._judge_program(sample, index, plan, record, why)
            return
        value_key = "value" if suite.kind == "calls" else "values"
        if record is None or value_key not in record:
            sample.outcomes[index] = False
            sample.notes[index] = why or str(record.get("error", "no value"))[:120]
            if suite.kind == "asserts":
                sample.pending_checks.append((index, sample.plans[index], None))
            return
        try:
            decoded = harness.decode_plain(record[value_key])
        except harness.PlainValueError as exc:
            sample.outcomes[index] = False
            sample.notes[index] = str(exc)
            return
        if suite.kind == "calls":
            sample.outcomes[index] = harness.call_matches(decoded, test)
            if not sample.outcomes[index]:
                sample.notes[index] = "wrong value"
            return
        plan = sample.plans[index]
        if not isinstance(decoded, list) or len(decoded) != len(plan.exprs):
            sample.outcomes[index] = False
            sample.notes[index] = "wrong number of values"
            return
        is_literal, expected = plan.literal
        if is_literal:
            sample.outcomes[index] = harness.strict_equal(decoded[0], expected)
            if not sample.outcomes[index]:
                sample.notes[index] = "assert failed"
            return
        sample.pending_checks.append((index, plan, record[value_key]))

    def _judge_program(
        self, sample: _Sample, index: int, plan: harness.ProgramPlan, record: dict | None, why: str
    ) -> None:
        """Whole-program runs report a boolean (untrusted); record runs report a table for the replay stage."""
        sample.outcomes[index] = False
        if plan.untrusted is not None:
            passed = record.get("passed") if record else None
            sample.outcomes[index] = passed is True
            if passed is not True:
                sample.notes[index] = why or str(record.get("error", "assert failed"))[:120]
            return
        try:
            table = harness.decode_table(record["table"]) if record and "table" in record else None
        except harness.PlainValueError as exc:
            sample.notes[index] = str(exc)
            table = None
        if table is None:
            sample.notes.setdefault(index, why or str((record or {}).get("error", "no result table"))[:120])
        sample.pending_checks.append((index, plan, table))

    def _run_checks(self, samples: list[_Sample]) -> None:
        pending = [s for s in samples if s.final is None and any(v is not None for _, _, v in s.pending_checks)]
        if not pending:
            return
        nonces = [harness.new_nonce() for _ in pending]
        limits = self._limits(max(10.0, self.config.timeout_s))
        requests = [
            harness.python_check_request([(plan, values) for _, plan, values in s.pending_checks], nonce, limits)
            for s, nonce in zip(pending, nonces, strict=True)
        ]
        for sample, nonce, result in zip(pending, nonces, self._run(requests), strict=True):
            record, why = harness.single_record(result, nonce)
            passed = record.get("passed") if record else None
            if (
                not isinstance(passed, list)
                or len(passed) != len(sample.pending_checks)
                or not all(type(p) is bool for p in passed)
            ):
                sample.final = RewardResult.unscorable(f"assert checking stage failed: {why or 'bad record'}")
                continue
            for (index, _, values), ok in zip(sample.pending_checks, passed, strict=True):
                if values is not None:
                    sample.outcomes[index] = ok
                    if not ok:
                        sample.notes[index] = "assert failed"

    def _verdict(self, sample: _Sample) -> RewardResult:
        if sample.final is not None:
            return sample.final
        total = len(sample.outcomes)
        infra = [i for i, o in enumerate(sample.outcomes) if o is None]
        if infra:
            return RewardResult.unscorable(f"sandbox failure on test {infra[0]}: {sample.notes[infra[0]]}")
        passed = sum(1 for o in sample.outcomes if o)
        all_passed = 1.0 if passed == total else 0.0
        score = passed / total if self.config.scoring == "fraction" else all_passed
        failures = "; ".join(f"test {i}: {note}" for i, note in sorted(sample.notes.items())[:3])
        reason = f"{passed}/{total} tests passed" + (f"; {failures}" if failures else "")
        if sample.untrusted:
            reason += f" (trusted: false: {sample.untrusted})"
            return RewardResult(score=score, reason=reason, passed=passed, total=total, trusted=False)
        return RewardResult(score=score, reason=reason, passed=passed, total=total)

    # -- sandbox -----------------------------------------------------------------------------------
    def _limits(self, seconds: float, memory_mb: int | None = None) -> Limits:
        return Limits(wall_time_s=seconds, cpu_time_s=seconds, memory_mb=memory_mb or self.config.memory_mb)

    def _run(self, requests: list[RunRequest]) -> list[RunResult]:
        if not requests:
            return []
        try:
            backend = self._sandbox()
        except Exception as exc:  # an unavailable backend is an infrastructure failure: every run is None
            failure = RunResult(status=RunStatus.SANDBOX_ERROR, message=f"backend unavailable: {exc}")
            return [failure for _ in requests]
        results = backend.run_batch(requests, concurrency=self.config.concurrency)
        if len(results) != len(requests):
            return [RunResult(status=RunStatus.SANDBOX_ERROR, message="backend lost results") for _ in requests]
        return results

    def _sandbox(self):
        with self._backend_lock:
            if self._backend is None:
                from rewardkit.sandboxes.factory import open_backend

                options = dict(self.config.backend_options)
                if self.config.base_url:
                    options.setdefault("base_url", self.config.base_url)
                self._backend = open_backend(self.config.backend, **options)
            return self._backend
