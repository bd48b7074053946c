"""Request builders: every sandboxed run ``code_tests`` makes, as a one-shot :class:`RunRequest`.

Python tests run the in-sandbox harness (``harness_inside.py``, package data shipped as ``rk_harness.py``) in one of
its modes; what each mode's process receives is the security argument of :mod:`.harness`: the solution's process
gets the solution, the arguments of its calls and a nonce; the trusted process gets the test and the solution's
answers, never the solution. Stdio, checker and compile runs get only what their program needs.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from typing import Any

from rewardsmith.rewards.code.case_formats import CallTest, Checker, StdioTest
from rewardsmith.rewards.code.plans import AssertPlan, ProgramPlan
from rewardsmith.sandboxes.base import Limits, RunRequest

SPEC_FILE = "rk_spec.json"

#: The in-sandbox harness (``harness_inside.py``, package data) is a module, shipped beside every run as
#: ``rk_harness.py``; the local backend's warm forkserver imports it once, so runs skip compiling it. ``main.py``
#: only starts it.
RUNTIME_MODULE = "rk_harness"
LAUNCHER = f"import os, sys\nsys.path.insert(0, os.getcwd())\nimport {RUNTIME_MODULE}\n{RUNTIME_MODULE}._rk_main()\n"

#: the trusted stage's first statement: only absolute (read-only system) directories stay on its import path
TRUSTED_PATH = "import sys\nsys.path[:] = [p for p in sys.path if p.startswith('/')]\n"


@functools.cache
def runtime_source() -> str:
    """Source of the harness that runs next to the solution (read once from ``harness_inside.py``)."""
    return resources.files(__package__).joinpath("harness_inside.py").read_text(encoding="utf-8")


def checker_request(checker: Checker, test: StdioTest, stdout: bytes, limits: Limits) -> RunRequest:
    """The special judge's own run: the dataset's checker, the input, the solution's output and the answer."""
    files = {"checker.py": checker.source, "input.txt": test.input, "output.txt": stdout, "answer.txt": test.output}
    return RunRequest(
        argv=["python3", "checker.py", "input.txt", "output.txt", "answer.txt"], files=files, limits=limits
    )


def _harness_files() -> dict[str, str]:
    return {"main.py": LAUNCHER, f"{RUNTIME_MODULE}.py": runtime_source()}


def _spec_file(spec: dict[str, Any]) -> str:
    return json.dumps(spec)


def python_call_request(
    code: str, fn_name: str, test: CallTest, nonce: str, limits: Limits, prelude: str = ""
) -> RunRequest:
    """One call of the solution's function; ``prelude`` (imports a dataset's harness prepends) runs first, in the
    solution's scope, and none of its names is taken for the function or the ``Solution`` class."""
    spec = {"nonce": nonce, "mode": "call", "fn_name": fn_name, "args": list(test.args), "prelude": prelude}
    files = {**_harness_files(), "solution.py": code, SPEC_FILE: _spec_file(spec)}
    return RunRequest(argv=["python3", "main.py"], files=files, limits=limits)


def python_exprs_request(code: str, plan: AssertPlan, nonce: str, limits: Limits) -> RunRequest:
    spec = {"nonce": nonce, "mode": "exprs", "exprs": list(plan.exprs), "modules": list(plan.modules)}
    files = {**_harness_files(), "solution.py": code, SPEC_FILE: _spec_file(spec)}
    return RunRequest(argv=["python3", "main.py"], files=files, limits=limits)


def python_whole_request(code: str, plan: ProgramPlan, nonce: str, limits: Limits) -> RunRequest:
    """The *untrusted* run (``untrusted_asserts="run"``): the whole test program next to the solution, which can
    read and forge it; its result is marked ``trusted: false``."""
    spec = {"nonce": nonce, "mode": "whole", "program": plan.source, "modules": list(plan.modules), "seed": plan.seed}
    files = {**_harness_files(), "solution.py": code, SPEC_FILE: _spec_file(spec)}
    return RunRequest(argv=["python3", "main.py"], files=files, limits=limits)


def python_answer_request(code: str, plan: ProgramPlan, queries: list[list], nonce: str, limits: Limits) -> RunRequest:
    """The solution's run for a program test: the solution, the site chains (names only) and the calls to answer,
    in the order the trusted process asked them. No test source, no expected value."""
    spec = {
        "nonce": nonce,
        "mode": "answer",
        "chains": dict(plan.chains),
        "queries": queries,
        "modules": list(plan.modules),
    }
    files = {**_harness_files(), "solution.py": code, SPEC_FILE: _spec_file(spec)}
    return RunRequest(argv=["python3", "main.py"], files=files, limits=limits)


def _check_entry(plan: AssertPlan | ProgramPlan, data: Any) -> dict[str, Any]:
    if isinstance(plan, ProgramPlan):
        return {"replay": plan.replay, "probe": plan.probe, "table": data, "seed": plan.seed}
    return {"source": plan.check, "values": data}


def python_check_request(checks: list[tuple[AssertPlan | ProgramPlan, Any]], nonce: str, limits: Limits) -> RunRequest:
    """The trusted stage: no file at all (see :func:`trusted_argv`), only the tests' glue or programs and the
    solution's answers so far (host-validated values) on stdin. Each program check reports a verdict, or the calls
    it still needs answered."""
    modules = sorted({m for plan, _ in checks for m in plan.modules})
    spec = {
        "nonce": nonce,
        "mode": "check",
        "modules": modules,
        "checks": [_check_entry(plan, data) for plan, data in checks],
    }
    return RunRequest(argv=trusted_argv(), stdin=_spec_file(spec), limits=limits)


def trusted_argv() -> list[str]:
    """How the trusted stage starts: an interpreter without site-packages, ``.pth`` files or user site (``-S -s``)
    whose first statement drops every relative entry (the working directory) from its path, running the harness
    given on its command line, its spec read from stdin. Nothing it imports or reads comes from a place a solution
    can write, so files a solution planted in a reused sandbox (a ``json.py``, a ``sitecustomize``, a spec or a
    record) never reach it. Not ``-I``: that ignores ``PYTHONHASHSEED`` too, and replays need the fixed seed (a
    test iterating a set of strings asks its calls in one order in every round)."""
    return ["python3", "-s", "-S", "-c", trusted_script()]


@functools.cache
def trusted_script() -> str:
    """The trusted stage's program (:func:`trusted_argv`); offered to backends as a warm script, so the local one
    compiles it once and forks it warm, with a fresh site-less interpreter's import state, for every stage."""
    return f"{TRUSTED_PATH}{runtime_source()}\n_rk_main(spec_on_stdin=True)\n"


def stdio_request(language: str, program: str | bytes, test: StdioTest, limits: Limits) -> RunRequest:
    if language == "python":
        return RunRequest(
            argv=["python3", "solution.py"], files={"solution.py": program}, stdin=test.input, limits=limits
        )
    if language == "javascript":
        return RunRequest(argv=["node", "solution.js"], files={"solution.js": program}, stdin=test.input, limits=limits)
    if language == "java":
        heap = f"-Xmx{limits.memory_mb}m"
        limits = _reserving_runtime(limits, tasks=COMPILER_TASKS)
        argv = ["java", *JVM_FLAGS, heap, "-Xss64m", "-XX:TieredStopAtLevel=1", "-jar", "solution.jar"]
        return RunRequest(argv=argv, files={"solution.jar": program}, stdin=test.input, limits=limits)
    if language == "go":
        limits = _reserving_runtime(limits, tasks=limits.max_processes)
        return RunRequest(argv=["./solution"], files={"solution": program}, stdin=test.input, limits=limits)
    if language in COMPILED:
        return RunRequest(argv=["./solution"], files={"solution": program}, stdin=test.input, limits=limits)
    raise ValueError(f"no stdio runner for {language}")


#: languages compiled once per distinct program; the artefact ``solution`` (a binary, or a jar for Java) is
#: fetched back and handed to every test's run
COMPILED = ("cpp", "java", "go", "rust")
#: what to install (Debian packages) when a compiler is missing from the sandbox
TOOLCHAINS = {
    "cpp": "apt-get install g++",
    "java": "apt-get install default-jdk-headless",
    "go": "apt-get install golang-go",
    "rust": "apt-get install rustc",
}
#: compilers and the JVM start many threads: their runs get this many tasks
COMPILER_TASKS = 64
JAVA_CLASS = re.compile(r"^\s*public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_]\w*)", re.MULTILINE)


#: keep the JVM's up-front reservations small enough for an address-space limit
JVM_FLAGS = ("-XX:+UseSerialGC", "-XX:CompressedClassSpaceSize=64m", "-XX:ReservedCodeCacheSize=64m", "-Xshare:auto")


def _reserving_runtime(limits: Limits, tasks: int) -> Limits:
    """The JVM and the Go runtime reserve address space far beyond what they use (like V8): their runs get
    ``memory_mb + 2048`` (the Java heap stays capped at the requested size by ``-Xmx``)."""
    return limits.model_copy(
        update={"memory_mb": limits.memory_mb + 2048, "max_processes": max(limits.max_processes, tasks)}
    )


def java_main_class(code: str) -> str:
    """The public class (its file must be named after it); ``Main`` when none is declared public."""
    match = JAVA_CLASS.search(code)
    return match.group(1) if match else "Main"


def compile_request(language: str, code: str, limits: Limits) -> RunRequest:
    """One sandboxed compile; success leaves ``solution`` to fetch back."""
    limits = limits.model_copy(update={"max_processes": max(limits.max_processes, COMPILER_TASKS)})
    if language == "cpp":
        argv = ["g++", "-O2", "-std=c++17", "-pipe", "-o", "solution", "solution.cpp"]
        return RunRequest(argv=argv, files={"solution.cpp": code}, limits=limits, fetch_files=["solution"])
    if language == "java":
        name = java_main_class(code)
        jvm = " ".join(f"-J{flag}" for flag in (*JVM_FLAGS, "-Xmx512m"))
        script = (
            f"javac {jvm} -encoding UTF-8 -d classes {name}.java"
            f" && printf 'Main-Class: {name}\\n' > manifest && jar {jvm} -cfm solution manifest -C classes ."
        )
        return RunRequest(
            argv=["sh", "-c", script], files={f"{name}.java": code}, limits=limits, fetch_files=["solution"]
        )
    if language == "go":
        # one build job on one OS thread per tool: few threads, so a sandbox that caps tasks (a remote one at its
        # default) still compiles; the Go runtime dies when it cannot start a thread
        script = (
            "export GOCACHE=/tmp/go-cache GOPATH=/tmp/go GO111MODULE=off GOMAXPROCS=1"
            " && go build -p 1 -o solution solution.go"
        )
        return RunRequest(
            argv=["sh", "-c", script], files={"solution.go": code}, limits=limits, fetch_files=["solution"]
        )
    if language == "rust":
        # one codegen unit: few threads, so a sandbox that caps tasks (a remote one at its default) still compiles
        argv = ["rustc", "--edition", "2021", "-O", "-C", "codegen-units=1", "-o", "solution", "solution.rs"]
        return RunRequest(argv=argv, files={"solution.rs": code}, limits=limits, fetch_files=["solution"])
    raise ValueError(f"{language} is not compiled")
