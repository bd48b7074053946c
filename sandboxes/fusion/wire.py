"""The SandboxFusion ``/run_code`` wire format and its translation to and from the sandbox contract.

Shared by the client (:mod:`rewardsmith.sandboxes.fusion.client`) and the server
(:mod:`rewardsmith.sandboxes.fusion.server`) so both read the protocol the same way. SandboxFusion's ``Success`` only
means "exit code 0"; its ``SandboxError`` and a run status ``Error`` mean the service failed, never that the
program was wrong, so they map to ``RunStatus.SANDBOX_ERROR``. Our server adds one optional field,
``rewardsmith_status``, carrying the exact verdict (memory and output limits have no SandboxFusion spelling); real
SandboxFusion servers omit it and the client falls back to the mapping of the standard fields.
"""

from __future__ import annotations

import base64
import binascii
import shlex
from collections.abc import Mapping
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from rewardsmith.sandboxes.base import Limits, RunRequest, RunResult, RunStatus


class LanguageSpec(BaseModel):
    """How one SandboxFusion language runs: the file the code goes to, the optional compile step, the run argv."""

    model_config = ConfigDict(frozen=True)

    source: str
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None


#: SandboxFusion language names this package runs. Compiled languages compile and run inside one sandbox run.
LANGUAGES: dict[str, LanguageSpec] = {
    "python": LanguageSpec(source="main.py", run=("python3", "main.py")),
    "nodejs": LanguageSpec(source="main.js", run=("node", "main.js")),
    "cpp": LanguageSpec(
        source="main.cpp", compile=("g++", "-O2", "-std=c++17", "-o", "main", "main.cpp"), run=("./main",)
    ),
    "bash": LanguageSpec(source="main.sh", run=("bash", "main.sh")),
}

_SUFFIXES = {
    ".py": "python",
    ".js": "nodejs",
    ".mjs": "nodejs",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".sh": "bash",
}
_INTERPRETERS = {"python3": "python", "python": "python", "node": "nodejs", "nodejs": "nodejs"}

#: Exit code and stderr marker of a failed compile step (the program has not run yet when they are written).
COMPILE_FAILED_EXIT = 96
COMPILE_FAILED_MARKER = "rewardsmith-sandbox: compile failed, exit "


# --- wire models -------------------------------------------------------------------------------------------------


class RunCodeRequest(BaseModel):
    """Body of ``POST /run_code``. ``files`` maps a relative path to base64 content."""

    model_config = ConfigDict(extra="ignore")

    code: str
    language: str
    compile_timeout: float = Field(10, gt=0)
    run_timeout: float = Field(10, gt=0)
    memory_limit_MB: int = -1
    stdin: str | None = None
    files: dict[str, str | None] = Field(default_factory=dict)
    fetch_files: list[str] = Field(default_factory=list)


class FusionStatus(str, Enum):
    SUCCESS = "Success"
    FAILED = "Failed"
    SANDBOX_ERROR = "SandboxError"


class CommandStatus(str, Enum):
    FINISHED = "Finished"
    ERROR = "Error"
    TIME_LIMIT_EXCEEDED = "TimeLimitExceeded"


class CommandRunResult(BaseModel):
    model_config = ConfigDict(extra="ignore")

    status: CommandStatus
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunCodeResponse(BaseModel):
    model_config = ConfigDict(extra="ignore")

    status: FusionStatus
    message: str = ""
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    files: dict[str, str] = Field(default_factory=dict)
    rewardsmith_status: RunStatus | None = None


# --- language <-> RunRequest -------------------------------------------------------------------------------------


def language_for_suffix(suffix: str) -> str:
    try:
        return _SUFFIXES[suffix.lower()]
    except KeyError:
        raise ValueError(f"no language for suffix {suffix!r}; pass one of {sorted(LANGUAGES)}") from None


def _compile_and_run_script(spec: LanguageSpec, compile_timeout_s: float) -> str:
    assert spec.compile is not None
    compile_cmd = shlex.join(spec.compile)
    return (
        f"timeout -s KILL {compile_timeout_s:g} {compile_cmd} >&2; rc=$?; "
        f'if [ "$rc" -ne 0 ]; then echo "{COMPILE_FAILED_MARKER}$rc" >&2; exit {COMPILE_FAILED_EXIT}; fi; '
        f"exec {shlex.join(spec.run)}"
    )


def program_request(
    code: str,
    language: str,
    stdin: str | bytes = b"",
    files: Mapping[str, str | bytes] | None = None,
    limits: Limits | None = None,
    compile_timeout_s: float = 10.0,
    fetch_files: list[str] | None = None,
) -> RunRequest:
    """A :class:`RunRequest` that runs ``code`` as ``language`` (``fetch_files`` are read back after the run).

    A compiled language compiles and runs in one sandbox run; its wall and CPU limits grow by ``compile_timeout_s``
    and a failed compile exits with :data:`COMPILE_FAILED_EXIT` after printing :data:`COMPILE_FAILED_MARKER`.
    """
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language {language!r}; supported: {sorted(LANGUAGES)}")
    spec = LANGUAGES[language]
    limits = limits or Limits()
    all_files: dict[str, str | bytes] = {**(files or {}), spec.source: code}
    fetch = list(fetch_files or [])
    if spec.compile is None:
        return RunRequest(argv=list(spec.run), files=all_files, stdin=stdin, limits=limits, fetch_files=fetch)
    grown = limits.model_copy(
        update={
            "wall_time_s": limits.wall_time_s + compile_timeout_s,
            "cpu_time_s": limits.cpu_time_s + compile_timeout_s,
        }
    )
    argv = ["sh", "-c", _compile_and_run_script(spec, compile_timeout_s)]
    return RunRequest(argv=argv, files=all_files, stdin=stdin, limits=grown, fetch_files=fetch)


def compile_failure(result: RunResult) -> int | None:
    """The compiler's exit code if ``result`` is a failed compile step of :func:`program_request`, else None."""
    if result.exit_code != COMPILE_FAILED_EXIT:
        return None
    last = result.stderr.rstrip().rsplit(b"\n", 1)[-1].decode("utf-8", "replace")
    if not last.startswith(COMPILE_FAILED_MARKER):
        return None
    try:
        return int(last[len(COMPILE_FAILED_MARKER) :])
    except ValueError:
        return None


class UnsupportedRequest(ValueError):
    """A RunRequest that the SandboxFusion API cannot express."""


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode() if isinstance(value, str) else value


def _as_text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def encode_files(files: Mapping[str, str | bytes]) -> dict[str, str]:
    return {path: base64.b64encode(_as_bytes(content)).decode("ascii") for path, content in files.items()}


def check_relative_path(path: str) -> str:
    """``path`` itself; raises ValueError unless it is relative and stays inside the working directory."""
    if not path or path.startswith("/") or ".." in path.split("/"):
        raise ValueError(f"file path must be relative and stay inside the working directory: {path!r}")
    return path


def decode_files(files: dict[str, str | None]) -> dict[str, bytes]:
    """Base64 file contents to bytes; raises ValueError on bad base64 or unsafe paths."""
    decoded: dict[str, bytes] = {}
    for path, content in files.items():
        check_relative_path(path)
        try:
            decoded[path] = base64.b64decode(content or "", validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError(f"file {path!r} is not valid base64: {exc}") from None
    return decoded


def _compiled_language(argv: list[str]) -> tuple[str, float] | None:
    """(language, compile timeout) when ``argv`` is :func:`program_request`'s compile-and-run form."""
    if len(argv) != 3 or argv[:2] != ["sh", "-c"] or not argv[2].startswith("timeout -s KILL "):
        return None
    try:
        compile_timeout_s = float(argv[2].split()[3])
    except (IndexError, ValueError):
        return None
    for name, spec in LANGUAGES.items():
        if spec.compile is not None and argv[2] == _compile_and_run_script(spec, compile_timeout_s):
            return name, compile_timeout_s
    return None


def fusion_request_for(request: RunRequest, compile_timeout_s: float = 10.0) -> RunCodeRequest:
    """Express a RunRequest as a SandboxFusion request.

    ``python3 FILE`` / ``python3 -c CODE`` / ``node FILE`` and :func:`program_request`'s compiled form map to their
    language; any other argv runs as a ``bash`` script (``exec argv``) beside the same files.
    """
    argv = request.argv
    files = dict(request.files)
    language: str
    code: str
    run_timeout = request.limits.wall_time_s
    compiled = _compiled_language(argv)
    if compiled is not None:
        language, compile_timeout_s = compiled
        code = _as_text(files.pop(LANGUAGES[language].source, ""))
        run_timeout = max(0.1, run_timeout - compile_timeout_s)
    elif len(argv) == 2 and argv[0] in _INTERPRETERS and argv[1] in files:
        language = _INTERPRETERS[argv[0]]
        code = _as_text(files.pop(argv[1]))
    elif len(argv) == 3 and argv[0] in _INTERPRETERS and argv[1] in ("-c", "-e"):
        language = _INTERPRETERS[argv[0]]
        if (language == "python") != (argv[1] == "-c"):
            raise UnsupportedRequest(f"{argv[0]} {argv[1]} is not a form the SandboxFusion API can express")
        code = argv[2]
    else:
        language = "bash"
        code = f"exec {shlex.join(argv)}\n"
        program = argv[0].removeprefix("./")
        if program in files:  # uploaded files arrive without the executable bit (a binary compiled earlier)
            code = f"chmod u+x {shlex.quote(program)}\n{code}"
    if request.limits.network:
        raise UnsupportedRequest("network access cannot be requested through the SandboxFusion API")
    return RunCodeRequest(
        code=code,
        language=language,
        compile_timeout=compile_timeout_s,
        run_timeout=run_timeout,
        memory_limit_MB=request.limits.memory_mb,
        stdin=_as_text(request.stdin),
        files=encode_files(files),
        fetch_files=list(request.fetch_files),
    )


# --- verdict mapping ---------------------------------------------------------------------------------------------


def run_result_from_response(response: RunCodeResponse) -> RunResult:
    """The sandbox verdict a SandboxFusion response stands for (client side), with its fetched ``files``.

    Raises ValueError when ``files`` is not base64 (a malformed response).
    """
    files = decode_files(dict(response.files)) if response.files else {}
    result = _verdict_of(response)
    if result.status is not RunStatus.SANDBOX_ERROR:
        result.files = files
    return result


def _verdict_of(response: RunCodeResponse) -> RunResult:
    if response.status is FusionStatus.SANDBOX_ERROR:
        return RunResult(
            status=RunStatus.SANDBOX_ERROR, message=f"SandboxFusion SandboxError: {response.message}".strip()
        )
    compiled = response.compile_result
    if compiled is not None and (compiled.status is not CommandStatus.FINISHED or compiled.return_code != 0):
        if compiled.status is CommandStatus.ERROR:
            return RunResult(
                status=RunStatus.SANDBOX_ERROR, message=f"compile step failed in the sandbox: {compiled.stderr or ''}"
            )
        timed_out = compiled.status is CommandStatus.TIME_LIMIT_EXCEEDED
        return RunResult(
            status=RunStatus.TIMEOUT if timed_out else RunStatus.RUNTIME_ERROR,
            exit_code=compiled.return_code,
            stdout=(compiled.stdout or "").encode(),
            stderr=(compiled.stderr or "").encode(),
            wall_time_s=compiled.execution_time or 0.0,
            message="compile time limit exceeded" if timed_out else "compilation failed",
        )
    run = response.run_result
    if run is None:
        return RunResult(status=RunStatus.SANDBOX_ERROR, message=f"response without run_result: {response.message}")
    common = {
        "stdout": (run.stdout or "").encode(),
        "stderr": (run.stderr or "").encode(),
        "wall_time_s": run.execution_time or 0.0,
        "message": response.message,
    }
    if run.status is CommandStatus.ERROR:
        return RunResult(
            status=RunStatus.SANDBOX_ERROR,
            **{**common, "message": f"run step failed in the sandbox: {response.message}"},
        )
    if run.status is CommandStatus.TIME_LIMIT_EXCEEDED:
        status = RunStatus.TIMEOUT
    elif run.return_code is None:
        return RunResult(status=RunStatus.SANDBOX_ERROR, **{**common, "message": "finished run without a return code"})
    else:
        status = RunStatus.OK if run.return_code == 0 else RunStatus.RUNTIME_ERROR
    if response.rewardsmith_status is not None and response.rewardsmith_status is not RunStatus.SANDBOX_ERROR:
        status = response.rewardsmith_status
    code = run.return_code
    signal = -code if code is not None and code < 0 else None
    return RunResult(status=status, exit_code=code if signal is None else None, signal=signal, **common)


def _command_result(result: RunResult) -> CommandRunResult:
    if result.status is RunStatus.TIMEOUT:
        status = CommandStatus.TIME_LIMIT_EXCEEDED
    elif result.status is RunStatus.SANDBOX_ERROR:
        status = CommandStatus.ERROR
    else:
        status = CommandStatus.FINISHED
    return_code = result.exit_code if result.exit_code is not None else (-result.signal if result.signal else None)
    if status is CommandStatus.FINISHED and return_code is None:
        return_code = 1  # a limit kill without a code still has to read as a failure
    return CommandRunResult(
        status=status,
        execution_time=round(result.wall_time_s, 6),
        return_code=return_code,
        stdout=result.stdout.decode("utf-8", "replace"),
        stderr=result.stderr.decode("utf-8", "replace"),
    )


def response_from_run_result(result: RunResult, language: str) -> RunCodeResponse:
    """The SandboxFusion response for a sandbox verdict (server side)."""
    if result.status is RunStatus.SANDBOX_ERROR:
        return RunCodeResponse(
            status=FusionStatus.SANDBOX_ERROR,
            message=result.message,
            run_result=_command_result(result),
            rewardsmith_status=RunStatus.SANDBOX_ERROR,
        )
    spec = LANGUAGES[language]
    compile_result = None
    if spec.compile is not None:
        compiler_code = compile_failure(result)
        if compiler_code is not None:
            stderr = result.stderr.rstrip().rsplit(b"\n", 1)[0] if b"\n" in result.stderr.rstrip() else b""
            killed = compiler_code in (124, 137)
            compile_result = CommandRunResult(
                status=CommandStatus.TIME_LIMIT_EXCEEDED if killed else CommandStatus.FINISHED,
                execution_time=round(result.wall_time_s, 6),
                return_code=compiler_code,
                stdout=result.stdout.decode("utf-8", "replace"),
                stderr=stderr.decode("utf-8", "replace"),
            )
            return RunCodeResponse(
                status=FusionStatus.FAILED,
                message="compile time limit exceeded" if killed else "compilation failed",
                compile_result=compile_result,
                files=encode_files(result.files),
                rewardsmith_status=RunStatus.TIMEOUT if killed else RunStatus.RUNTIME_ERROR,
            )
        compile_result = CommandRunResult(status=CommandStatus.FINISHED, return_code=0, stdout="", stderr="")
    return RunCodeResponse(
        status=FusionStatus.SUCCESS if result.status is RunStatus.OK else FusionStatus.FAILED,
        message=result.message,
        compile_result=compile_result,
        run_result=_command_result(result),
        files=encode_files(result.files),
        rewardsmith_status=result.status,
    )
