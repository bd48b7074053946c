"""``code_turns``: each assistant turn's Python, run in the sandbox after the code of the turns before it.

An agent that works in a Python interpreter writes code turn after turn, and each turn builds on the state the
earlier ones left (a variable defined in turn 1 is read in turn 3). Per turn:

- 1.0 when the turn's code runs without an error;
- 0.0 when it raises, or the sandbox stops it (time, memory, output limit), or it ends the interpreter, or a code
  tool call of the turn cannot be read (arguments not a JSON object with a string ``code``): the completion made
  checking impossible;
- ``no_code_score`` (default 1.0, as ``tool_call_validity``'s ``no_call_score``) for a turn without code;
- ``None`` (unscorable, with the reason) only when the sandbox itself fails or is unavailable.

As an ordinary reward a transcript scores the mean of its turns; :func:`rewardsmith.steps.step_rewards` gets the
per-turn values. It pays code that *runs*, not code that is right: on its own it is gamed by ``pass``, so it is a term
beside an outcome reward (a ``weighted_sum`` with ``math_equivalence`` or ``code_tests``), not a goal.

**A turn's code** is, with ``sources="auto"``, its calls to a code tool (``tool_names``, the code in the
``code_argument`` argument) when it makes any, else its fenced Python blocks (``python``, ``py``, ``python3``);
``"tool_calls"`` and ``"fenced"`` take only one kind. A turn's cells run in order, each to its end or its error (an
error in one cell does not stop the next, as in an interpreter that answers each call).

**State by replay.** Turn ``k`` runs in one sandbox process that first replays the code of turns ``1..k-1``
silently (their output discarded, their errors caught) and then runs turn ``k`` after a marker, so the turn's verdict
is this run's own: the sandbox's status after the marker. Replay is the mechanism because every sandbox backend
(local, docker, remote SandboxFusion) runs one stateless program per request under its limits: a live interpreter
kept between turns would have to live outside that contract, and could not take back a turn that hung or blew its
memory, while a replay simply leaves it out. That is the rule: an earlier turn that raised is replayed (an
interpreter keeps the state built before the error, so a later turn that uses it is not blamed for the failure),
an earlier turn the sandbox stopped or that ended the interpreter is not (a kernel would have died; its neighbours
are judged on their own code). :class:`rewardsmith.adapters.trainers.environments.PythonSandboxEnvironment` carries
state the same way (replay, a cell that hung left out), so a rollout of that environment replays as it ran, save a
cell that ended the interpreter, which it replays and this leaves out. The cost: ``n`` code turns take ``n``
sandbox runs and replay ``n (n - 1) / 2`` turns of code, and turn ``k``'s run may take ``k * timeout_s``; the runs of
one round (the ``k``-th code turn of every transcript of the batch) go to the sandbox together, ``concurrency`` at a
time. Code whose behaviour changes between runs (random numbers, the clock) may replay differently; a replay that
does not reach turn ``k`` scores turn ``k`` 0.0 and says so.

The markers are written by the harness inside the same process as the code, as they must be (the state is there):
code that reaches into the harness can forge them and make its own turn, or the turns after it, look clean. That
gains nothing a ``try:`` around a turn's code does not already, which is what this reward is: a check that code runs,
paid beside an outcome, never alone.

**Recorded tool results** are never trusted to raise a score: the environment wrote them, and a transcript whose
tool messages came from elsewhere (a model that wrote its own "results", edited data) must not be paid on its word.
With ``recorded_output="note"`` (default) a turn whose rerun printed something its recorded result does not hold
(whitespace-insensitive, the first ``compare_chars`` characters of the rerun's output) keeps its verdict and says
so; ``"zero"`` scores such a turn 0.0, for transcripts whose tool results the policy itself may have written. A
rerun can legitimately differ (random numbers, the clock, set order), which is why disagreement is not 0.0 by
default.

>>> from rewardsmith import get_reward
>>> reward = get_reward("code_turns", timeout_s=2.0)
>>> reward.close()
"""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from rewardsmith.registry import register_reward
from rewardsmith.reward import RewardConfig
from rewardsmith.reward_config import ConfigGroup
from rewardsmith.rewards.code.extract import TAGS, code_blocks
from rewardsmith.rewards.code.sandbox_use import SandboxSettings, check_sandbox, open_sandbox, run_batch
from rewardsmith.rewards.turns import _mean_of_turns, _TurnReward
from rewardsmith.sandboxes.base import Limits, RunRequest, RunResult, RunStatus, SandboxBackend
from rewardsmith.transcripts import ToolCall, Turn
from rewardsmith.types import RewardResult

DEFAULT_TOOLS = ["run_python", "python", "execute_python", "code_interpreter", "ipython", "run_code", "execute_code"]


class CodeTurnsExtract(ConfigGroup):
    """Where a turn's code is: its code-tool calls, its fenced Python blocks."""

    sources: Literal["auto", "tool_calls", "fenced"] = Field(
        "auto", description="auto: a turn's code-tool calls when it makes any, else its fenced Python blocks"
    )
    tool_names: list[str] = Field(default_factory=lambda: list(DEFAULT_TOOLS), description="tools that run Python")
    code_argument: str = Field("code", description="the argument of a code tool call that holds the code")


class CodeTurnsSandbox(SandboxSettings):
    """Which sandbox reruns the turns, how isolated, and the limits of each turn's run."""

    timeout_s: float = Field(5.0, gt=0, description="wall and CPU limit of one turn's code (replays get as much)")
    output_bytes: int = Field(1 << 20, gt=0, description="stdout and stderr cap of one turn's run")


class CodeTurnsGrade(ConfigGroup):
    """What a turn scores, and what a rerun that disagrees with the recorded tool result costs."""

    no_code_score: float = Field(1.0, ge=0.0, le=1.0, description="score of a turn without code")
    recorded_output: Literal["note", "zero"] = Field(
        "note", description="a rerun printing what the recorded tool result does not hold: noted, or 0.0"
    )
    compare_chars: int = Field(500, gt=0, description="characters of the rerun's output compared with the record")


class CodeTurnsConfig(RewardConfig):
    """``code_turns``'s settings by stage; each setting may also be given flat (``timeout_s=10``)."""

    extract: CodeTurnsExtract = Field(default_factory=CodeTurnsExtract, description=CodeTurnsExtract.__doc__)
    sandbox: CodeTurnsSandbox = Field(default_factory=CodeTurnsSandbox, description=CodeTurnsSandbox.__doc__)
    grade: CodeTurnsGrade = Field(default_factory=CodeTurnsGrade, description=CodeTurnsGrade.__doc__)


#: the program each run executes: replay (output to /dev/null, errors caught), a start marker, the turn's cells
#: (tracebacks to stderr and each error's summary line after a marker, each cell's output after a marker; a process
#: the code forked that comes back into the harness ends there), an end marker naming the cells that failed, then
#: ``os._exit`` so no thread or ``atexit`` hook of the code decides when the run ends
HARNESS = """\
import os, sys, traceback
_nonce, _replayed, _cells = {nonce!r}, {replayed}, {cells}
_pid = os.getpid()
_marks = os.dup(1)
_replay = []
for _i in range(_replayed):
    with open(f"replay_{{_i}}.py", encoding="utf-8") as _f:
        _replay.append((f"<turn before, cell {{_i}}>", _f.read()))
_own = []
for _i in range(_cells):
    with open(f"cell_{{_i}}.py", encoding="utf-8") as _f:
        _own.append((f"<cell {{_i}}>", _f.read()))
del _f, _i


def _mark(text):
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os.write(_marks, f"\\n{{_nonce}} {{text}}\\n".encode())


_g = {{"__name__": "__main__", "__builtins__": __builtins__}}
_saved = os.dup(1), os.dup(2)
_null = os.open(os.devnull, os.O_WRONLY)
os.dup2(_null, 1)
os.dup2(_null, 2)
for _name, _src in _replay:
    try:
        exec(compile(_src, _name, "exec"), _g)
    except BaseException:
        pass
    if os.getpid() != _pid:
        os._exit(0)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
os.dup2(_saved[0], 1)
os.dup2(_saved[1], 2)
_mark("start")
_failed = []


def _failure(k, error):
    if os.getpid() != _pid:
        os._exit(0)
    traceback.print_exc()
    _failed.append(str(k))
    try:
        summary = f"{{type(error).__name__}}: {{error}}"
    except BaseException:
        summary = type(error).__name__
    _mark(f"error {{k}} " + " ".join(summary.split())[:200])


for _k, (_name, _src) in enumerate(_own):
    _mark(f"cell {{_k}}")
    try:
        exec(compile(_src, _name, "exec"), _g)
    except SystemExit as _exit:
        if _exit.code not in (None, 0):
            _failure(_k, _exit)
    except BaseException as _error:
        _failure(_k, _error)
    if os.getpid() != _pid:
        os._exit(0)
_mark("end " + (",".join(_failed) or "-"))
os._exit(1 if _failed else 0)
"""


@dataclass
class _Cell:
    code: str
    recorded: str | None = None  # the tool result the transcript holds for this call, when it holds one


@dataclass
class _CodeTurn:
    cells: list[_Cell]
    problem: str | None = None  # a code call that could not be read: the turn is 0.0 whatever its cells do


@dataclass
class _Transcript:
    turns: list[_CodeTurn | None]  # None: a turn without code
    replay: list[str] = field(default_factory=list)  # cells of earlier turns that ran to their end or their error
    replayed_turns: int = 0
    results: dict[int, RewardResult] = field(default_factory=dict)


@register_reward("code_turns")
class CodeTurns(_TurnReward):
    """Per turn: 1.0 when the turn's Python runs without error after the earlier turns' code, else 0.0.

    Config: see :class:`CodeTurnsConfig`; the module doc gives the rule, the replay and what a recorded tool result
    may and may not change. The backend is opened lazily and never pickled, so the reward ships to spawned workers.
    """

    Config = CodeTurnsConfig
    config: CodeTurnsConfig

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        self._backend: SandboxBackend | None = None
        self._backend_lock = threading.Lock()
        self._check_backend()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_backend"] = None
        del state["_backend_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._backend_lock = threading.Lock()

    def warm_up(self) -> None:
        start = getattr(self._sandbox(), "warm_up", None)
        if callable(start):
            start()

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    # -- scoring ---------------------------------------------------------------------------------
    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        """Plain text (a plain dataset, or a composite that hands its parts text): one turn, its fenced blocks.

        Text has lost the transcript's tool calls, so text without a fenced Python block is unscorable with the
        fix, never "no code" (a tool-use transcript would otherwise earn ``no_code_score`` for every turn)."""
        lost = "code_turns got plain text, which holds no tool calls: give it the conversational completion directly"
        if self.config.extract.sources == "tool_calls":
            return RewardResult.unscorable(lost)
        if not any(tag in TAGS["python"] for tag, _ in code_blocks(completion)):
            return RewardResult.unscorable(f"{lost} (this text has no fenced Python block)")
        return _mean_of_turns(self.score_turns([[Turn(0, completion)]], [dict(row)])[0])

    def score_turns(self, turns: list[list[Turn]], rows: list[dict[str, Any]]) -> list[list[RewardResult]]:
        try:
            return self._score_turns(turns)
        except Exception as exc:  # a bug here must cost the batch its signal, never the trainer its run
            why = f"internal error: {type(exc).__name__}: {exc}"
            return [[RewardResult.unscorable(why) for _ in sample] for sample in turns]

    def _score_turns(self, turns: list[list[Turn]]) -> list[list[RewardResult]]:
        transcripts = [_Transcript([self._code_of(turn) for turn in sample]) for sample in turns]
        for sample in transcripts:
            for k, turn in enumerate(sample.turns):
                if turn is None:
                    sample.results[k] = RewardResult(score=self.config.grade.no_code_score, reason="no code")
        round_ = 0
        while True:
            pending = [(s, n) for s in transcripts if (n := _nth_code_turn(s, round_)) is not None]
            if not pending:
                break
            unreadable = [(s, k) for s, k in pending if not _cells(s, k)]
            for sample, k in unreadable:  # nothing of the turn can run: its unreadable call decides
                sample.results[k] = RewardResult(score=0.0, reason=str(_problem(sample, k)))
            pending = [(s, k) for s, k in pending if _cells(s, k)]
            requests = [self._request(s, k) for s, k in pending]
            for (sample, k), run in zip(pending, self._run(requests), strict=True):
                sample.results[k] = self._judge(sample, k, run)
            round_ += 1
        warning = getattr(self._backend, "isolation_warning", None) if self._backend is not None else None
        out = []
        for sample in transcripts:
            results = [sample.results[k] for k in range(len(sample.turns))]
            if warning:
                results = [r.model_copy(update={"reason": f"{r.reason} [{warning}]"}) for r in results]
            out.append(results)
        return out

    def _code_of(self, turn: Turn) -> _CodeTurn | None:
        config = self.config.extract
        calls = [c for c in turn.tool_calls if c.name in config.tool_names]
        if calls and config.sources != "fenced":
            answered = len(turn.tool_results) == len(turn.tool_calls)
            cells, problems = [], []
            for index, call in enumerate(turn.tool_calls):
                if call.name not in config.tool_names:
                    continue
                code, problem = self._call_code(call)
                if problem is not None:
                    problems.append(f"call {call.name!r}: {problem}")
                    continue
                cells.append(_Cell(code, turn.tool_results[index] if answered else None))
            return _CodeTurn(cells, problems[0] if problems else None)
        if config.sources == "tool_calls":
            return None
        blocks = [body for tag, body in code_blocks(turn.text) if tag in TAGS["python"]]
        return _CodeTurn([_Cell(b) for b in blocks]) if blocks else None

    def _call_code(self, call: ToolCall) -> tuple[str, str | None]:
        arguments, why = call.parsed_arguments()
        if arguments is None:
            return "", why
        code = arguments.get(self.config.extract.code_argument)
        if not isinstance(code, str):
            return "", f"no string {self.config.extract.code_argument!r} argument"
        return code, None

    def _request(self, sample: _Transcript, k: int) -> tuple[str, RunRequest]:
        turn = sample.turns[k]
        assert turn is not None
        nonce = secrets.token_hex(8)
        files: dict[str, str | bytes] = {f"replay_{i}.py": code for i, code in enumerate(sample.replay)}
        files.update({f"cell_{i}.py": cell.code for i, cell in enumerate(turn.cells)})
        files["main.py"] = HARNESS.format(nonce=nonce, replayed=len(sample.replay), cells=len(turn.cells))
        seconds = self.config.sandbox.timeout_s * (1 + sample.replayed_turns)
        limits = Limits(
            wall_time_s=seconds,
            cpu_time_s=seconds,
            memory_mb=self.config.sandbox.memory_mb,
            output_bytes=self.config.sandbox.output_bytes,
        )
        return nonce, RunRequest(argv=["python3", "main.py"], files=files, limits=limits)

    def _judge(self, sample: _Transcript, k: int, run: tuple[str, RunResult]) -> RewardResult:
        nonce, result = run
        turn = sample.turns[k]
        assert turn is not None
        if result.status is RunStatus.SANDBOX_ERROR:
            return RewardResult.unscorable(f"sandbox failure: {result.message or 'no detail'}")
        stdout = result.stdout.decode("utf-8", "replace")
        marks = [m.group(1) for m in re.finditer(rf"\n{nonce} ([^\n]*)\n", stdout)]
        started = "start" in marks
        ended = next((text[4:] for text in reversed(marks) if text.startswith("end ")), None)  # the harness's: last
        limit = {RunStatus.TIMEOUT: "time limit", RunStatus.MEMORY: "memory limit",
                 RunStatus.OUTPUT_LIMIT: "output limit"}.get(result.status)  # fmt: skip
        if not started:
            return RewardResult(
                score=0.0,
                reason="the earlier turns' code did not replay up to this turn (it behaves differently when run "
                f"again); {limit or _exit(result)}",
            )
        if limit is not None or ended is None:
            why = f"stopped by the sandbox: {limit}" if limit else f"ended the interpreter ({_exit(result)})"
            return RewardResult(score=0.0, reason=why)
        sample.replay.extend(cell.code for cell in turn.cells)
        sample.replayed_turns += 1
        if turn.problem is not None:
            return RewardResult(score=0.0, reason=turn.problem)
        if ended != "-":
            first = ended.split(",")[0]
            summary = next((text.split(" ", 2)[2] for text in marks if text.startswith(f"error {first} ")), None)
            error = summary or _last_line(result.stderr.decode("utf-8", "replace"))
            return RewardResult(score=0.0, reason=f"cell {first} raised: {error}")
        notes = self._disagreements(turn, stdout, nonce)
        if notes and self.config.grade.recorded_output == "zero":
            return RewardResult(score=0.0, reason=f"ran, but {notes[0]}")
        cells = len(turn.cells)
        reason = f"{cells} cell{'s' if cells != 1 else ''} ran without error"
        return RewardResult(score=1.0, reason=reason + (f" ({notes[0]})" if notes else ""))

    def _disagreements(self, turn: _CodeTurn, stdout: str, nonce: str) -> list[str]:
        notes = []
        for i, cell in enumerate(turn.cells):
            if cell.recorded is None:
                continue
            begin = stdout.find(f"\n{nonce} cell {i}\n")
            end = stdout.find(f"\n{nonce} ", begin + 1)
            printed = _squash(stdout[begin + len(f"\n{nonce} cell {i}\n") : end])[: self.config.grade.compare_chars]
            if printed and printed not in _squash(cell.recorded):
                notes.append(f"cell {i} printed {printed[:60]!r}, which its recorded tool result does not hold")
        return notes

    # -- sandbox -----------------------------------------------------------------------------------
    def _run(self, requests: list[tuple[str, RunRequest]]) -> list[tuple[str, RunResult]]:
        results = run_batch(self._sandbox, [r for _, r in requests], self.config.sandbox.concurrency)
        return [(nonce, result) for (nonce, _), result in zip(requests, results, strict=True)]

    def _sandbox(self) -> SandboxBackend:
        with self._backend_lock:
            if self._backend is None:
                self._backend = self._open_backend()
            return self._backend

    def _open_backend(self) -> SandboxBackend:
        return open_sandbox(self.config.sandbox, {"isolation": self.config.sandbox.isolation})

    def _check_backend(self) -> None:
        """Refuse, at construction, a backend that cannot carry the verdicts: the same contract and refusal as
        ``code_tests`` (:func:`rewardsmith.rewards.code.sandbox_use.check_sandbox`)."""
        check_sandbox("code_turns", self.config.sandbox, {"isolation": self.config.sandbox.isolation})


def _nth_code_turn(sample: _Transcript, n: int) -> int | None:
    """The index of the ``n``-th turn with code (from 0), once the earlier ones are judged; None past the last."""
    with_code = [k for k, turn in enumerate(sample.turns) if turn is not None]
    return with_code[n] if n < len(with_code) else None


def _cells(sample: _Transcript, k: int) -> list[_Cell]:
    turn = sample.turns[k]
    return turn.cells if turn is not None else []


def _problem(sample: _Transcript, k: int) -> str | None:
    turn = sample.turns[k]
    return turn.problem if turn is not None else None


def _exit(result: RunResult) -> str:
    if result.signal is not None:
        return f"killed by signal {result.signal}"
    return f"exit code {result.exit_code}" if result.exit_code is not None else result.status.value


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no traceback"


def _squash(text: str) -> str:
    return " ".join(text.split())
