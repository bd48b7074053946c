"""``code_tests``: run the completion's program against the sample's tests in a sandbox.

Formula: ``score = passed / total`` (``scoring="fraction"``) or ``1.0 if passed == total else 0.0``
(``scoring="all_or_nothing"``). No code block → 0.0. Unparseable tests, or any sandbox/infrastructure failure
→ ``None`` (never 0.0: a broken sandbox must not look like a wrong answer).

Pipeline: find the tests (the ``tests`` column, else the dataset's own columns: HumanEval, MBPP, APPS/TACO,
open-r1/PrimeIntellect ``verification_info``, LiveCodeBench, CodeContests; see :mod:`.datasets`, the shape is
named in the reason) → extract the program (:mod:`.extract`: the last fenced block in the language; in Python the
last one that defines a tested name, a cut-off trailing definition trimmed, an unfenced completion taken when it is a
program that defines a tested name; each said in the reason; a body-only completion of a function prompt runs as
``prompt + body``, ``prepend_prompt``) → parse the tests (:mod:`.case_formats`) → one
sandboxed process per test (:mod:`.harness` says why a pass cannot be forged; C++, Java, Go and Rust are compiled
once per distinct program and the artefact reused, also across batches) → verdicts decided outside the solution's
process (a ``checker`` judges stdio output by tokens, float tolerance or a checker program run in a process of its
own). Program tests (HumanEval ``check``, comprehension asserts, MBPP setup code) run only in the trusted stage,
which asks runs of the solution for call results in rounds (:mod:`.checking`); the trusted stage shares one process
among up to ``check_batch`` samples.

Isolation fails closed: the local backend runs only under bubblewrap unless ``isolation="weak"`` is set, in which
case every reason says ``WEAK ISOLATION``; without bubblewrap and without that opt-in every sample is ``None``
with a reason that says how to fix it.

``untrusted_asserts`` (default ``"unscorable"``): a test that can only be decided inside the solution's own
process (it checks side effects, reaches names through ``eval``/``getattr``, or passes the solution a function or
object of its own; see :mod:`.harness`)
could be forged by the solution, so by default its sample scores ``None`` with ``trusted: false`` in the
reason. ``"run"`` scores it anyway and marks the result ``trusted=False`` (reason ends ``(trusted: false: ...)``).

>>> from rewardsmith import get_reward
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

import ast
import dataclasses
import hashlib
import threading
from typing import Any, Literal

from pydantic import Field, model_validator

from rewardsmith.registry import register_reward
from rewardsmith.reward import Reward, RewardConfig
from rewardsmith.reward_config import ConfigGroup
from rewardsmith.rewards.code import datasets, harness, preludes
from rewardsmith.rewards.code.case_formats import BadTestsFormat, TestSuite, normalize_language, parse_tests
from rewardsmith.rewards.code.checking import ProgramState, TrustedChecker
from rewardsmith.rewards.code.checking import Sample as _Sample
from rewardsmith.rewards.code.extract import extract_program
from rewardsmith.rewards.code.sandbox_use import SandboxSettings, check_sandbox, open_sandbox, run_batch
from rewardsmith.sandboxes.base import Limits, RunRequest, RunResult, RunStatus, SandboxBackend
from rewardsmith.types import RewardResult


class CodeTestsSource(ConfigGroup):
    """Where a sample's tests come from and how many of them run."""

    language: str = Field("python", description="language when the tests do not name one")
    detect_tests: bool = Field(
        True, description="without the tests column, read the tests from a known dataset shape's own columns"
    )
    max_tests: int | None = Field(None, gt=0, description="use only the first N tests of each sample")

    @model_validator(mode="after")
    def _known_language(self) -> CodeTestsSource:
        normalize_language(self.language)
        return self


class CodeExtract(ConfigGroup):
    """Which part of the completion is the program."""

    code_block: Literal["last", "first", "raw"] = Field("last", description="which fenced block; raw = whole text")
    allow_untagged_block: bool = Field(True, description="fall back to a block without a language tag")
    prepend_prompt: Literal["auto", "never"] = Field(
        "auto", description="auto: a body-only completion of a function prompt (HumanEval) runs as prompt + body"
    )


class CodeSandbox(SandboxSettings):
    """Which sandbox runs the tests, how isolated, and the limits of each test's process and of compiling."""

    timeout_s: float = Field(5.0, gt=0, description="wall and CPU limit of each test's process")
    compile_timeout_s: float = Field(60.0, gt=0, description="wall and CPU limit of compiling one program")
    check_batch: int = Field(16, gt=0, description="samples whose trusted checking stage shares one process")


class CodeGrade(ConfigGroup):
    """How test outcomes become a score."""

    scoring: Literal["fraction", "all_or_nothing"] = Field(
        "fraction", description="fraction: passed / total; all_or_nothing: 1.0 only when every test passes"
    )
    stop_on_first_failure: bool = Field(
        False, description="run a sample's tests in order and stop at its first failure (the rest count as failed)"
    )
    untrusted_asserts: Literal["unscorable", "run"] = Field(
        "unscorable",
        description="asserts decidable only next to the solution (forgeable): None, or run and mark trusted=false",
    )


class CodeTestsConfig(RewardConfig):
    """``code_tests``'s settings by stage; each setting may also be given flat (``backend="docker"``)."""

    tests_column: str = Field("tests", description="dataset column holding each sample's tests (dict or JSON)")
    prompt_column: str = Field("prompt", description="where the function prompt is when the tests do not carry it")
    tests: CodeTestsSource = Field(default_factory=CodeTestsSource, description=CodeTestsSource.__doc__)
    extract: CodeExtract = Field(default_factory=CodeExtract, description=CodeExtract.__doc__)
    sandbox: CodeSandbox = Field(default_factory=CodeSandbox, description=CodeSandbox.__doc__)
    grade: CodeGrade = Field(default_factory=CodeGrade, description=CodeGrade.__doc__)


def entry_points(suite: TestSuite, raw: Any) -> frozenset[str]:
    """The names the tests call on the solution, so extraction grades the block that defines one (a usage block
    after the solution defines none): the call tests' function (and LeetCode's ``Solution``), HumanEval's
    ``entry_point``, the free names of assert tests that are not builtins or standard modules. Empty for stdio."""
    if suite.kind == "stdio":
        return frozenset()
    names: set[str] = set()
    if suite.fn_name:
        names |= {suite.fn_name, "Solution"}
    if isinstance(raw, dict) and isinstance(raw.get("entry_point"), str):
        names.add(raw["entry_point"])
    if suite.kind == "asserts" and not names:
        for test in suite.tests:
            names |= _free_names(getattr(test, "source", ""))
    return frozenset(names)


def _free_names(source: str) -> set[str]:
    """Names a test reads without binding them, less builtins and standard modules: the solution's."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    bound |= {
        a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in [*n.posonlyargs, *n.args, *n.kwonlyargs]
    }
    return loaded - bound - harness.TRUSTED_NAMES


#: compiled programs kept per reward instance (by source hash), oldest dropped first
COMPILE_CACHE_SIZE = 256
COMPILE_CACHE_BYTES = 64 << 20


@register_reward("code_tests")
class CodeTests(Reward[CodeTestsConfig]):
    """Fraction (or all) of a sample's tests passed by the completion's code, run in a sandbox.

    Config: see :class:`CodeTestsConfig` (``backend="local"`` by default; ``"docker"``/``"remote"`` with
    ``base_url``). The backend is opened lazily and never pickled, so the reward ships to spawned workers.
    """

    @property
    def gold_columns(self) -> tuple[str, ...]:
        """A misaligned column this reward reads makes a sample unscorable with a reason that names it."""
        return (self.config.tests_column,)

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self._backend: SandboxBackend | None = None
        self._backend_lock = threading.Lock()
        self._compiled: dict[str, RunResult] = {}
        self._checker = TrustedChecker(self.config, run=self._run, limits=self._limits)
        self._check_backend()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_backend"] = None
        state["_compiled"] = {}
        del state["_backend_lock"], state["_checker"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._backend_lock = threading.Lock()
        self._compiled = {}
        self._checker = TrustedChecker(self.config, run=self._run, limits=self._limits)

    def warm_up(self) -> None:
        """Open the sandbox and start it (the local sandbox's first forkserver, Docker's container pool)."""
        start = getattr(self._sandbox(), "warm_up", None)
        if callable(start):
            start()

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
            self._run_checkers(live)
            self._checker.run_checks(live)
            self._run_undecidable(live)
        results = [s if isinstance(s, RewardResult) else self._verdict(s) for s in samples]
        warning = getattr(self._backend, "isolation_warning", None) if self._backend is not None else None
        if warning:
            results = [r.model_copy(update={"reason": f"{r.reason} [{warning}]"}) for r in results]
        return results

    def _start_sample(self, text: str | None, row: dict[str, Any]) -> _Sample | RewardResult:
        if text is None:
            return RewardResult.unscorable("completion is not text")
        try:
            raw, source = datasets.find_tests(row, self.config.tests_column, self.config.tests.detect_tests)
        except BadTestsFormat as exc:
            return RewardResult.unscorable(str(exc))
        shape = "" if source == f"column {self.config.tests_column!r}" else f" (tests: {source})"
        if isinstance(raw, dict) and "$skipped" in raw:
            raw = dict(raw)
            shape = shape[:-1] + f"; skipped unreadable {', '.join(raw.pop('$skipped'))})"
        try:
            suite = parse_tests(raw, self.config.tests.language)
        except BadTestsFormat as exc:
            return RewardResult.unscorable(f"tests unusable{shape}: {exc}")
        if self.config.tests.max_tests:
            suite = dataclasses.replace(suite, tests=suite.tests[: self.config.tests.max_tests])  # checker kept
        extracted = extract_program(
            text,
            suite.language,
            self.config.extract.code_block,
            self.config.extract.allow_untagged_block,
            entry_points(suite, raw),
        )
        if extracted is not None and extracted.note:
            shape = f"{shape[:-1]}; {extracted.note})" if shape else f" ({extracted.note})"
        code = self._join_prompt(extracted.code if extracted is not None else None, text, raw, row)
        if code is None:
            reason = f"no {suite.language} code block{shape}"
            return RewardResult(score=0.0, reason=reason, passed=0, total=len(suite))
        prelude = ""
        if suite.language == "python" and (suite.kind == "calls" or source == datasets.LIVECODEBENCH):
            # as LeetCode/LiveCodeBench harnesses do (List, defaultdict ...): call tests run it before the solution
            # (its names never stand in for the solution's function), stdio programs get it prepended
            if suite.kind == "calls":
                prelude = preludes.IMPORT_PRELUDE
            else:
                code = preludes.with_prelude(code)
            shape = f"{shape[:-1]}; {preludes.NOTE})" if shape else f" ({preludes.NOTE})"
        sample = _Sample(suite, code, program=code, outcomes=[False] * len(suite), shape=shape, prelude=prelude)
        if suite.kind == "asserts":
            try:
                defined = harness.solution_names(code)
                sample.plans = [harness.plan_assert(t, defined) for t in suite.tests]
            except (ValueError, SyntaxError, RecursionError) as exc:
                return RewardResult.unscorable(f"tests unusable: {exc}")
            untrusted = [p.untrusted for p in sample.plans if isinstance(p, harness.ProgramPlan) and p.untrusted]
            if untrusted:
                if self.config.grade.untrusted_asserts == "unscorable":
                    return RewardResult.unscorable(
                        f"test decidable only next to the solution (trusted: false): {untrusted[0]};"
                        " set untrusted_asserts='run' to score it anyway",
                        trusted=False,
                    )
                sample.untrusted = untrusted[0]
        return sample

    def _join_prompt(self, code: str | None, text: str, raw: Any, row: dict[str, Any]) -> str | None:
        """HumanEval's convention: a completion that is only the function body is run as ``prompt + body``."""
        if self.config.extract.prepend_prompt == "never" or not isinstance(raw, dict):
            return code
        entry_point = raw.get("entry_point") or raw.get("fn_name")
        prompt = raw.get("prompt") if isinstance(raw.get("prompt"), str) else row.get(self.config.prompt_column)
        if not isinstance(entry_point, str) or not datasets.function_prompt(prompt, entry_point):
            return code
        candidate = code if code is not None else text
        if not candidate.strip() or datasets.defines(candidate, entry_point):
            return code if code is not None else (candidate if candidate.strip() else None)
        return datasets.join_body(prompt, candidate)

    def _compile(self, samples: list[_Sample]) -> None:
        """Compile each distinct program (C++, Java, Go, Rust) once: identical completions (common within a GRPO
        group) and programs compiled in an earlier batch reuse the binary (or the compile error)."""
        cpp = [s for s in samples if s.suite.language in harness.COMPILED]
        if not cpp:
            return
        keys = [hashlib.sha256(f"{s.suite.language}\0{s.code}".encode()).hexdigest() for s in cpp]
        missing = list(dict.fromkeys(k for k in keys if k not in self._compiled))
        if missing:
            source_of = {k: (s.suite.language, s.code) for k, s in zip(keys, cpp, strict=True)}
            limits = self._limits(
                self.config.sandbox.compile_timeout_s, memory_mb=max(self.config.sandbox.memory_mb, 2048)
            )
            results = self._run([harness.compile_request(*source_of[k], limits) for k in missing])
            fresh = dict(zip(missing, results, strict=True))
            for key, compiled in fresh.items():
                if not compiled.infrastructure_failure:  # an infrastructure failure is retried next time
                    self._remember_compile(key, compiled)
        else:
            fresh = {}
        for sample, key in zip(cpp, keys, strict=True):
            result = fresh.get(key) or self._compiled.get(key)
            if result is None or result.infrastructure_failure:
                message = result.message if result is not None else "compile result lost"
                sample.final = RewardResult.unscorable(f"sandbox failure while compiling: {message}")
            elif result.exit_code == 127 and result.status is RunStatus.RUNTIME_ERROR:
                language = sample.suite.language
                sample.final = RewardResult.unscorable(
                    f"no {language} toolchain in the {self.config.sandbox.backend} sandbox: "
                    f"{harness.TOOLCHAINS[language]}"
                )
            elif not result.ok:
                error = result.stderr.decode("utf-8", "replace")[-300:]
                sample.final = RewardResult(
                    score=0.0, reason=f"compile error: {error}", passed=0, total=len(sample.suite)
                )
            elif "solution" not in result.files:
                sample.final = RewardResult.unscorable("compiler reported success but produced no binary")
            else:
                sample.program = result.files["solution"]

    def _remember_compile(self, key: str, result: RunResult) -> None:
        self._compiled[key] = result
        size = sum(len(r.files.get("solution", b"")) + len(r.stderr) for r in self._compiled.values())
        while len(self._compiled) > 1 and (len(self._compiled) > COMPILE_CACHE_SIZE or size > COMPILE_CACHE_BYTES):
            dropped = self._compiled.pop(next(iter(self._compiled)))
            size -= len(dropped.files.get("solution", b"")) + len(dropped.stderr)

    def _run_tests(self, samples: list[_Sample]) -> None:
        """All tests of all samples at once; with ``stop_on_first_failure``, in waves (test k of every sample still
        passing), so a sample that failed a test decided on the spot runs no more of its tests."""
        live = [s for s in samples if s.final is None]
        if not self.config.grade.stop_on_first_failure:
            self._run_jobs([(s, i) for s in live for i in range(len(s.suite))])
            return
        for index in range(max((len(s.suite) for s in live), default=0)):
            wave = [s for s in live if index < len(s.suite) and not self._failed_already(s, index)]
            self._run_jobs([(s, index) for s in wave])
            for sample in live:
                if index < len(sample.suite) and sample not in wave:
                    sample.notes.setdefault(index, "not run (stopped at the first failure)")

    @staticmethod
    def _failed_already(sample: _Sample, before: int) -> bool:
        """A test before ``before`` failed for good (not waiting on the checking stage)."""
        waiting = {index for index, _, _ in sample.pending_checks}
        return any(sample.outcomes[i] is not True and i not in waiting for i in range(before))

    def _run_jobs(self, pairs: list[tuple[_Sample, int]]) -> None:
        limits = self._limits(self.config.sandbox.timeout_s)
        jobs: list[tuple[_Sample, int, str, RunRequest]] = []
        for sample, index in pairs:
            suite, test = sample.suite, sample.suite.tests[index]
            nonce = harness.new_nonce()
            if suite.kind == "stdio":
                request = harness.stdio_request(suite.language, sample.program, test, limits)
            elif suite.kind == "calls":
                assert suite.fn_name is not None  # case_formats gives every calls suite its function's name
                request = harness.python_call_request(sample.code, suite.fn_name, test, nonce, limits, sample.prelude)
            elif isinstance(plan := sample.plans[index], harness.ProgramPlan):
                if plan.untrusted is not None:
                    request = harness.python_whole_request(sample.code, plan, nonce, limits)
                else:  # decided in the trusted stage: the solution only answers the calls it asks (round 1 first)
                    sample.programs[index] = ProgramState()
                    sample.pending_checks.append((index, plan, {}))
                    continue
            else:
                request = harness.python_exprs_request(sample.code, plan, nonce, limits)
            jobs.append((sample, index, nonce, request))
        results = self._run([job[3] for job in jobs])
        for (sample, index, nonce, _), result in zip(jobs, results, strict=True):
            try:
                self._judge(sample, index, nonce, result)
            except Exception as exc:  # a host bug on one sample's output: that sample is unscorable, not the batch
                sample.outcomes[index] = None
                sample.notes[index] = f"host failed to judge the output: {type(exc).__name__}"

    @staticmethod
    def _as_program(sample: _Sample, index: int, plan: harness.ProgramPlan) -> None:
        """A simple assert whose parts are objects of the solution's, not values: decided as a program test (its
        objects stay in the solution's process; the rounds compare them exactly or refuse), never failed for it."""
        sample.plans[index] = plan
        if plan.untrusted is not None:
            sample.undecidable[index] = plan.untrusted
            return
        sample.programs[index] = ProgramState()
        sample.pending_checks.append((index, plan, {}))

    def _judge(self, sample: _Sample, index: int, nonce: str, result: RunResult) -> None:
        if result.infrastructure_failure:
            sample.outcomes[index] = None
            sample.notes[index] = f"sandbox failure: {result.message}"
            return
        suite = sample.suite
        test = suite.tests[index]
        if suite.kind == "stdio":
            if suite.checker is not None and suite.checker.kind == "program" and result.ok:
                sample.pending_checks.append((index, suite.checker, result.stdout))
                return
            if suite.checker is not None:
                passed = result.ok and harness.tokens_match(result.stdout, test.output, suite.checker)
            else:
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
        if isinstance(plan, harness.AssertPlan) and record is not None and record.get("objects") is True:
            self._as_program(sample, index, harness.plan_program(plan.source, harness.solution_names(sample.code)))
            return
        value_key = "value" if suite.kind == "calls" else "values"
        if record is None or value_key not in record:
            sample.outcomes[index] = False
            sample.notes[index] = why or harness.error_text(record, "no value")
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
        assert isinstance(plan, harness.AssertPlan)  # an asserts suite's test that is not a program
        if not isinstance(decoded, list) or len(decoded) != len(plan.exprs):
            sample.outcomes[index] = False
            sample.notes[index] = "wrong number of values"
            return
        is_literal, expected = plan.literal
        if is_literal:
            sample.outcomes[index] = harness.python_equal(decoded[0], expected)
            if not sample.outcomes[index]:
                sample.notes[index] = "assert failed"
            return
        sample.pending_checks.append((index, plan, record[value_key]))

    def _judge_program(
        self, sample: _Sample, index: int, plan: harness.ProgramPlan, record: dict | None, why: str
    ) -> None:
        """A whole-program run next to the solution (untrusted mode) reports a boolean."""
        passed = record.get("passed") if record else None
        sample.outcomes[index] = passed is True
        if passed is not True:
            sample.notes[index] = why or harness.error_text(record, "assert failed")

    def _run_undecidable(self, samples: list[_Sample]) -> None:
        """Program tests that pass the solution something that is not plain data: unscorable, or (opted in) run
        whole next to the solution and marked untrusted."""
        pairs = [(s, i) for s in samples if s.final is None for i in s.undecidable]
        if self.config.grade.untrusted_asserts == "unscorable":
            for sample, index in pairs:
                sample.final = RewardResult.unscorable(
                    f"test decidable only next to the solution (trusted: false): {sample.undecidable[index]};"
                    " set untrusted_asserts='run' to score it anyway",
                    trusted=False,
                )
            return
        limits = self._limits(self.config.sandbox.timeout_s)
        nonces = [harness.new_nonce() for _ in pairs]
        requests = [
            harness.python_whole_request(s.code, s.program_plan(i), nonce, limits)
            for (s, i), nonce in zip(pairs, nonces, strict=True)
        ]
        for (sample, index), nonce, result in zip(pairs, nonces, self._run(requests), strict=True):
            sample.untrusted = sample.undecidable[index]
            if result.infrastructure_failure:
                sample.outcomes[index] = None
                sample.notes[index] = f"sandbox failure: {result.message}"
                continue
            self._judge_program(sample, index, sample.program_plan(index), *harness.single_record(result, nonce))

    def _run_checkers(self, samples: list[_Sample]) -> None:
        """Checker programs (special judges) run one per output, in processes that never load the solution."""
        limits = self._limits(max(10.0, self.config.sandbox.timeout_s))
        jobs: list[tuple[_Sample, int, bytes]] = []
        requests: list[RunRequest] = []
        for sample in samples:
            checker = sample.suite.checker
            if sample.suite.kind != "stdio" or checker is None:  # only a checker program leaves stdio checks pending
                continue
            for index, _, output in sample.pending_checks:
                jobs.append((sample, index, output))
                requests.append(harness.checker_request(checker, sample.suite.tests[index], output, limits))
        for (sample, index, _), result in zip(jobs, self._run(requests), strict=True):
            if result.infrastructure_failure:
                sample.outcomes[index] = None
                sample.notes[index] = f"sandbox failure in the checker: {result.message}"
                continue
            sample.outcomes[index] = result.ok
            if not result.ok:
                verdict = result.stdout.decode("utf-8", "replace").strip()[:80] or result.status.value
                sample.notes[index] = f"checker rejected: {verdict}"
        for sample, *_ in jobs:
            sample.pending_checks = []

    def _verdict(self, sample: _Sample) -> RewardResult:
        if sample.final is not None:
            return sample.final
        total = len(sample.outcomes)
        infra = [i for i, o in enumerate(sample.outcomes) if o is None]
        if infra:
            return RewardResult.unscorable(f"sandbox failure on test {infra[0]}: {sample.notes[infra[0]]}")
        passed = sum(1 for o in sample.outcomes if o)
        all_passed = 1.0 if passed == total else 0.0
        score = passed / total if self.config.grade.scoring == "fraction" else all_passed
        failures = "; ".join(f"test {i}: {note}" for i, note in sorted(sample.notes.items())[:3])
        reason = f"{passed}/{total} tests passed" + (f"; {failures}" if failures else "") + sample.shape
        if sample.untrusted:
            reason += f" (trusted: false: {sample.untrusted})"
            return RewardResult(score=score, reason=reason, passed=passed, total=total, trusted=False)
        return RewardResult(score=score, reason=reason, passed=passed, total=total)

    # -- sandbox -----------------------------------------------------------------------------------
    def _limits(self, seconds: float, memory_mb: int | None = None) -> Limits:
        return Limits(wall_time_s=seconds, cpu_time_s=seconds, memory_mb=memory_mb or self.config.sandbox.memory_mb)

    def _run(self, requests: list[RunRequest]) -> list[RunResult]:
        return run_batch(self._sandbox, requests, self.config.sandbox.concurrency)

    def _sandbox(self) -> SandboxBackend:
        with self._backend_lock:
            if self._backend is None:
                self._backend = self._open_backend()
            return self._backend

    def _offered(self) -> dict[str, Any]:
        """What every backend is offered: the isolation accepted, the harness runtime to preload and the trusted
        stage's program to keep compiled."""
        return {
            "isolation": self.config.sandbox.isolation,
            "warm_modules": {harness.RUNTIME_MODULE: harness.runtime_source()},
            "warm_scripts": [harness.trusted_script()],
        }

    def _open_backend(self) -> SandboxBackend:
        return open_sandbox(self.config.sandbox, self._offered())

    def _check_backend(self) -> None:
        """Refuse, at construction, a backend that cannot carry the verdicts (:func:`.sandbox_use.check_sandbox`)."""
        check_sandbox("code_tests", self.config.sandbox, self._offered())
