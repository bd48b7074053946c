"""How ``code_tests`` runs Python tests so that a pass cannot be forged, and where each part lives.

Modules: :mod:`.plans` (what of a test reaches the solution, decided with ``ast``), :mod:`.requests` (every
sandboxed run), :mod:`.records` (the record protocol), :mod:`.values` (bounded decoding, type-strict comparison),
:mod:`.stdout_match` (stdio verdicts); ``harness_inside.py`` runs inside the sandbox. This module re-exports them.

Why a pass cannot be forged:

- **The solution's process never holds an expected value or the test's source.** Stdio runs get the input; call
  runs get the arguments; a simple assert is split (with ``ast``) into the solution sub-expressions (``f(x)``: a
  call and its arguments) and the checking glue, which runs in a process that never loads the solution
  (``== <literal>`` is compared on the host). Every other test (comprehensions, lambdas, ``:=``, ``map(f, xs)``,
  MBPP setup code, HumanEval ``check(candidate)``) runs only in the trusted process, with each solution
  expression replaced by a lookup of the solution's answers; the solution's process gets the calls to answer
  (arguments as decoded plain values, and the solution-rooted chain of each call site: names and attribute names,
  no constant). A frame walk or a scan of its own memory finds nothing to copy.
- **Rounds over one-shot runs.** Backends offer only ``RunRequest -> RunResult`` (local, Docker, SandboxFusion
  alike), so the channel between the two processes is the host: round 1 runs the test in the trusted process; a
  missing answer stops it, and a *probe* run of the same test lists the calls it makes: asserts are non-fatal and
  unknown results are placeholders that follow the path of a passing solution (the test's own ``==`` is true,
  ``!=`` false, anything inside an assert true; any other use of an unknown value stops the probe), so the calls
  asked are those a solution that passes would be asked, with the arguments the test computed. The solution's run
  answers them (all calls so far, in order, so objects it returned can be passed back to it, as MBPP's trees are);
  the trusted process replays with the answers. More rounds only when later arguments depend on earlier results,
  at most :data:`MAX_ROUNDS`; a test that keeps asking new calls (it reads the clock, or the solution is not
  deterministic) fails. Round 1 depends on the test alone, so its calls are cached per test. A program test
  therefore takes at most ``MAX_ROUNDS`` x (one trusted run, limit ``max(10 s, timeout_s)``, rerun alone once if it
  was shared and failed, plus one answer run, limit ``timeout_s``).
- **Values, not verdicts, come out** of the solution's process: the encoder accepts exact plain types only
  (``type(x) is int``), so ``__eq__``-always-true objects and subclasses of plain types are not values; the
  host validates every answer (bounded: :mod:`.values`) before the trusted process sees it, and a forged record
  can only choose the solution's outputs for the calls it was asked, never the verdict.
- **Objects stay where they were made.** A solution object reaches the trusted process as a proxy: its identity,
  ``==``, hash and truth are decided from what the solution's run reports of it (the first call that returned
  that very object; whether its class keeps ``object``'s own ``==``, hash and truth), asked of the solution's run
  like a call (``==`` of two objects with their own ``__eq__``, an object's text), or the test is refused by name
  (an own ``__hash__``/``__bool__``, ``type()``/``isinstance()`` of a proxy, ``is`` on values that crossed as
  copies): comparing proxies by their own identity would pass ``assert mirror(root) is not root`` for a mirror
  that returns its input. A solution's exception of its own class is raised there with its builtin bases.
- **One test per process**: the solution cannot skip, reorder or time out other tests; a timeout fails that test.
  A test counts only if its process reported exactly one record; ``exit(0)`` before the tests, ``os._exit`` in the
  function, a second record, an answer missing for a call it was asked: all fail.
- **Per-sample failure.** Whatever a program printed is decoded with caps on size, depth, integer digits and
  same-hash set elements; a refusal, or a trusted stage that the sample's values make time out, fails that
  sample (0.0 with the reason). ``None`` means the infrastructure failed (or the test itself is unusable).

Limits of the design: an argument that is not plain data (a function or object of the test's, e.g.
``candidate(lambda x: x)``), side effects on arguments, names reached dynamically (``eval``, ``getattr``,
``globals()``), subclassing a solution class or rebinding its names: such tests are *untrusted*, decidable only by
running the whole test next to the solution, which could forge the pass. They score ``None`` unless
``untrusted_asserts="run"``, which runs them that way and marks the result ``trusted: false``. Names the test
uses but does not define come from the solution (e.g. a HumanEval helper such as ``poly``): the test trusts them
by construction. Replays use a private ``random`` seeded from the test and a fixed hash seed.
"""

from __future__ import annotations

from rewardsmith.rewards.code.plans import (
    DYNAMIC_ACCESS,
    TRUSTED_NAMES,
    AssertPlan,
    ProgramPlan,
    plan_assert,
    plan_program,
    solution_names,
)
from rewardsmith.rewards.code.records import (
    decode_answers,
    decode_check_results,
    error_text,
    new_nonce,
    records,
    single_record,
)
from rewardsmith.rewards.code.requests import (
    COMPILED,
    COMPILER_TASKS,
    JVM_FLAGS,
    LAUNCHER,
    RUNTIME_MODULE,
    SPEC_FILE,
    TOOLCHAINS,
    checker_request,
    compile_request,
    java_main_class,
    python_answer_request,
    python_call_request,
    python_check_request,
    python_exprs_request,
    python_whole_request,
    runtime_source,
    stdio_request,
    trusted_script,
)
from rewardsmith.rewards.code.stdout_match import output_lines, stdout_matches, tokens_match
from rewardsmith.rewards.code.values import (
    PlainValueError,
    as_json_data,
    call_matches,
    decode_plain,
    load_json,
    python_equal,
    strict_equal,
)

#: rounds of (trusted run, solution run) a program test may take before it fails as diverged
MAX_ROUNDS = 6

__all__ = [
    "COMPILED",
    "COMPILER_TASKS",
    "DYNAMIC_ACCESS",
    "JVM_FLAGS",
    "LAUNCHER",
    "MAX_ROUNDS",
    "RUNTIME_MODULE",
    "SPEC_FILE",
    "TOOLCHAINS",
    "TRUSTED_NAMES",
    "AssertPlan",
    "PlainValueError",
    "ProgramPlan",
    "as_json_data",
    "call_matches",
    "checker_request",
    "compile_request",
    "decode_answers",
    "decode_check_results",
    "decode_plain",
    "error_text",
    "java_main_class",
    "load_json",
    "new_nonce",
    "output_lines",
    "plan_assert",
    "plan_program",
    "python_answer_request",
    "python_call_request",
    "python_check_request",
    "python_equal",
    "python_exprs_request",
    "python_whole_request",
    "records",
    "runtime_source",
    "single_record",
    "solution_names",
    "stdio_request",
    "stdout_matches",
    "strict_equal",
    "tokens_match",
    "trusted_script",
]
