"""The conformance suite of sandbox backends: what every :class:`~rewardsmith.sandboxes.base.SandboxBackend` must do,
checked by running real programs through it and reading the results from outside, as a reward would.

A backend's :meth:`~rewardsmith.sandboxes.base.SandboxBackend.describe` is a promise that callers act on (``code_tests``
refuses a backend that promises too little); this suite is how a promise is shown to be kept. Each check runs one
small program (a sleeper, a spinner, a memory or output flood, a connection to a listener on this host, a fork
spree, a segfault ...) with small limits and fails with what it saw when the result breaks the contract. A check of a
limit the backend does not claim to enforce, or of isolation stronger than it claims, is skipped, never passed;
the checks every backend needs (a program runs, stdin arrives whole, files come back, exit codes and crashes are
told apart from infrastructure failures) always run. Negative checks also ask for a sign of life from the program,
so a backend that fails every run cannot pass them.

For a backend's own tests, either all at once::

    from rewardsmith.sandboxes.conformance import assert_conformant
    assert_conformant(MyBackend())

or one pytest test per check::

    @pytest.mark.parametrize("check", CHECKS, ids=check_ids())
    def test_conformance(check, backend):
        result = run_check(check, backend)
        if result.outcome == "skipped":
            pytest.skip(result.detail)
        assert result.outcome == "passed", result.detail

``crash`` (optional everywhere) breaks the backend's own machinery mid-run (kills its worker process, its
container, its server's worker); with it the ``sandbox_crash`` check requires the run to read ``SANDBOX_ERROR`` and
the next run to work. The checks need ``python3`` (with ``ctypes``) and ``sleep`` where programs run.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import socket
import struct
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from rewardsmith.sandboxes.base import Guarantees, LimitName, Limits, RunRequest, RunResult, RunStatus, SandboxBackend

#: limits of every check's run unless the check sets its own (small, so a broken limit costs seconds)
BASE_LIMITS = Limits(
    wall_time_s=10.0, cpu_time_s=10.0, memory_mb=256, max_processes=16, output_bytes=64 << 10, file_size_mb=4
)
#: how far past its wall limit a run may return and still count as stopped by it (pool replacement, load)
WALL_SLACK_S = 10.0

Crash = Callable[[], None]


class Nonconforming(Exception):
    """A check saw the backend break its contract; the message says what it saw."""


class CheckResult(BaseModel):
    """One check's outcome on one backend."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    outcome: Literal["passed", "failed", "skipped"]
    detail: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        return f"{self.outcome.upper():7} {self.name} ({self.seconds:.1f}s){': ' + self.detail if self.detail else ''}"


@dataclass(frozen=True)
class Context:
    """What a check knows besides the backend: its promises and the crash hook, if any."""

    guarantees: Guarantees
    crash: Crash | None = None


@dataclass(frozen=True)
class Check:
    """One guarantee and the program that tests it.

    ``skip`` says why the check does not apply to a backend (None: it applies); ``probe`` runs the program(s),
    returns a short note on success and raises :class:`Nonconforming` with what it saw on failure.
    """

    name: str
    promise: str
    skip: Callable[[Context], str | None]
    probe: Callable[[SandboxBackend, Context], str]


# -- running ----------------------------------------------------------------------------------------------------------


def program(
    source: str,
    *,
    limits: Limits = BASE_LIMITS,
    stdin: str | bytes = b"",
    files: dict[str, str | bytes] | None = None,
    fetch_files: Sequence[str] = (),
) -> RunRequest:
    """``python3 main.py`` with ``source`` as ``main.py`` (the form every backend, the SandboxFusion one included,
    can express)."""
    shipped: dict[str, str | bytes] = {"main.py": source, **(files or {})}
    return RunRequest(
        argv=["python3", "main.py"], files=shipped, stdin=stdin, limits=limits, fetch_files=list(fetch_files)
    )


def _run(backend: SandboxBackend, request: RunRequest) -> tuple[RunResult, float]:
    started = time.monotonic()
    try:
        result = backend.run(request)
    except Exception as exc:  # the contract: a backend never raises for what a program does
        raise Nonconforming(f"run raised {type(exc).__name__}: {exc}") from exc
    return result, time.monotonic() - started


def _seen(result: RunResult) -> str:
    """The result in one line, for failure messages."""
    parts = [f"status={result.status.value}", f"exit_code={result.exit_code}", f"signal={result.signal}"]
    if result.message:
        parts.append(f"message={result.message[:160]!r}")
    parts.append(f"stdout={result.stdout[:120]!r}{'...' if len(result.stdout) > 120 else ''}")
    if result.stderr:
        parts.append(f"stderr=...{result.stderr[-200:]!r}")
    return " ".join(parts)


def _expect(condition: bool, what: str, result: RunResult) -> None:
    if not condition:
        raise Nonconforming(f"{what}; got {_seen(result)}")


def _ran(result: RunResult, marker: bytes = b"STARTED") -> None:
    """A negative check counts only if the program ran: a backend that fails every run must not pass it."""
    _expect(result.status is not RunStatus.SANDBOX_ERROR, "the program never ran (sandbox error)", result)
    _expect(marker in result.stdout, f"the program's first output ({marker.decode()}) never came back", result)


# -- applicability -----------------------------------------------------------------------------------------------------


def _always(context: Context) -> str | None:
    return None


def _enforced(limit: LimitName) -> Callable[[Context], str | None]:
    def skip(context: Context) -> str | None:
        if limit in context.guarantees.enforces:
            return None
        return f"the backend does not claim to enforce {limit}"

    return skip


def _isolated(level: Literal["strong", "weak"]) -> Callable[[Context], str | None]:
    def skip(context: Context) -> str | None:
        have = context.guarantees.isolation
        if have == "strong" or have == level:
            return None
        return f"the backend claims {have} isolation"

    return skip


def _has_crash_hook(context: Context) -> str | None:
    return None if context.crash is not None else "no crash hook given (run_conformance(..., crash=...))"


# -- the checks ----------------------------------------------------------------------------------------------------


def _runs_a_program(backend: SandboxBackend, context: Context) -> str:
    code = "import sys\nprint('out', 6 * 7)\nprint('err', file=sys.stderr)\n"
    result, seconds = _run(backend, program(code))
    _expect(
        result.status is RunStatus.OK and result.exit_code == 0, "a clean exit must read OK with exit code 0", result
    )
    _expect(result.stdout == b"out 42\n", "stdout must be the program's, byte for byte", result)
    _expect(b"err" in result.stderr and b"err" not in result.stdout, "stderr must come back apart from stdout", result)
    return f"{seconds:.2f}s"


def _wall_time(backend: SandboxBackend, context: Context) -> str:
    limits = BASE_LIMITS.model_copy(update={"wall_time_s": 2.0, "cpu_time_s": 2.0})
    result, seconds = _run(
        backend, program("import time\nprint('STARTED', flush=True)\ntime.sleep(60)\n", limits=limits)
    )
    _ran(result)
    _expect(result.status is RunStatus.TIMEOUT, "a program sleeping past its wall limit must read TIMEOUT", result)
    _expect(seconds < 2.0 + WALL_SLACK_S, f"the 2 s wall limit took {seconds:.1f}s to stop the program", result)
    return f"stopped after {seconds:.1f}s"


def _cpu_time(backend: SandboxBackend, context: Context) -> str:
    wall = 30.0  # far past the CPU second, so only the CPU limit can stop the spinner in time, even on a busy host
    limits = BASE_LIMITS.model_copy(update={"wall_time_s": wall, "cpu_time_s": 1.0})
    result, seconds = _run(backend, program("print('STARTED', flush=True)\nwhile True:\n    pass\n", limits=limits))
    _ran(result)
    _expect(result.status is RunStatus.TIMEOUT, "a program spinning past its CPU limit must read TIMEOUT", result)
    _expect(seconds < wall, f"the 1 s CPU limit did not stop the program before its {wall:g} s wall limit", result)
    return f"stopped after {seconds:.1f}s"


MEMORY_BOMB = """
print('STARTED', flush=True)
chunks = []
for _ in range(4):
    chunks.append(b'x' * (64 << 20))  # written, so every page is really used
print('ALLOCATED', len(chunks) * 64, 'MiB', flush=True)
"""


def _memory(backend: SandboxBackend, context: Context) -> str:
    limits = BASE_LIMITS.model_copy(update={"memory_mb": 64})
    result, _ = _run(backend, program(MEMORY_BOMB, limits=limits))
    _ran(result)
    _expect(b"ALLOCATED" not in result.stdout, "a program got 256 MiB under a 64 MiB limit", result)
    _expect(result.status is RunStatus.MEMORY, "a program stopped by its memory limit must read MEMORY", result)
    return "256 MiB refused under 64 MiB"


def _output_cap(backend: SandboxBackend, context: Context) -> str:
    cap = 4096
    limits = BASE_LIMITS.model_copy(update={"output_bytes": cap})
    code = "import sys\nfor _ in range(64):\n    sys.stdout.write('y' * 16384)\n"  # 1 MiB
    result, _ = _run(backend, program(code, limits=limits))
    _expect(result.status is not RunStatus.SANDBOX_ERROR, "the program never ran (sandbox error)", result)
    _expect(len(result.stdout) <= cap, f"{len(result.stdout)} bytes of stdout came back under a {cap}-byte cap", result)
    _expect(
        result.status is RunStatus.OUTPUT_LIMIT, "output over the cap must read OUTPUT_LIMIT (truncation said)", result
    )
    return f"1 MiB flood cut to {len(result.stdout)} bytes"


FILE_BOMB = """
print('STARTED', flush=True)
with open('big.bin', 'wb') as handle:
    for _ in range(16):
        handle.write(b'z' * (1 << 20))
        handle.flush()
print('WROTE', flush=True)
"""


def _file_size(backend: SandboxBackend, context: Context) -> str:
    limits = BASE_LIMITS.model_copy(update={"file_size_mb": 1})
    result, _ = _run(backend, program(FILE_BOMB, limits=limits))
    _ran(result)
    _expect(b"WROTE" not in result.stdout, "a program wrote a 16 MiB file under a 1 MiB limit", result)
    _expect(result.status is RunStatus.RUNTIME_ERROR, "a write past the file size limit must fail the program", result)
    return "16 MiB file refused under 1 MiB"


FORK_SPREE = """
import os
print('STARTED', flush=True)
read_end, write_end = os.pipe()
started = 0
for _ in range(48):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.close(write_end)
        os.read(read_end, 1)  # returns when the parent exits
        os._exit(0)
    started += 1
print('FORKED', started, flush=True)
"""


def _processes(backend: SandboxBackend, context: Context) -> str:
    limit = 8
    limits = BASE_LIMITS.model_copy(update={"max_processes": limit})
    result, _ = _run(backend, program(FORK_SPREE, limits=limits))
    _ran(result)
    words = result.stdout.split(b"FORKED")
    started = int(words[1].split()[0]) if len(words) == 2 and words[1].split() else None
    _expect(
        started is None or started <= limit,
        f"the program started {started} children under max_processes={limit}",
        result,
    )
    return f"{started} children started under a limit of {limit}" if started is not None else "the spree was stopped"


def _stdin(backend: SandboxBackend, context: Context) -> str:
    # larger than a pipe's buffer, UTF-8 (the SandboxFusion API carries text), with the bytes that trip line handling
    data = ("ligne é\r\n\t" + "0123456789" * 30 + " ✓\n") * 800 + "no newline at the end"
    code = (
        "import hashlib, sys\ndata = sys.stdin.buffer.read()\n"
        "print(len(data), hashlib.sha256(data).hexdigest())\nprint(sys.stdin.buffer.read() == b'')\n"
    )
    result, _ = _run(backend, program(code, stdin=data))
    expected = data.encode()
    want = f"{len(expected)} {hashlib.sha256(expected).hexdigest()}\nTrue\n".encode()
    _expect(
        result.ok and result.stdout == want,
        f"the program must read all {len(expected)} bytes of stdin, then EOF",
        result,
    )
    return f"{len(expected)} bytes read to EOF"


FETCH = """
import os
data = open('data/in.bin', 'rb').read()
os.makedirs('out', exist_ok=True)
with open('out/result.bin', 'wb') as handle:
    handle.write(data[::-1])
print('WROTE', len(data))
"""


def _file_fetch(backend: SandboxBackend, context: Context) -> str:
    payload = bytes(range(256)) * 8
    request = program(FETCH, files={"data/in.bin": payload}, fetch_files=["out/result.bin", "never/written.txt"])
    result, _ = _run(backend, request)
    _expect(
        result.ok and result.stdout == f"WROTE {len(payload)}\n".encode(),
        "a shipped binary file must arrive whole",
        result,
    )
    got = result.files
    _expect(
        got.get("out/result.bin") == payload[::-1], f"the written file must come back whole (got {sorted(got)})", result
    )
    _expect("never/written.txt" not in got, "a file the program never wrote must be absent, not empty", result)
    return "binary file shipped in and fetched back"


def _batch_order(backend: SandboxBackend, context: Context) -> str:
    # the first finishes last: results handed back in completion order would pay one sample for another's run
    requests = [program(f"import time\ntime.sleep({(3 - i) * 0.2})\nprint({i})\n") for i in range(4)]
    try:
        results = backend.run_batch(requests, concurrency=4)
    except Exception as exc:
        raise Nonconforming(f"run_batch raised {type(exc).__name__}: {exc}") from exc
    if len(results) != len(requests):
        raise Nonconforming(f"run_batch answered {len(results)} results for {len(requests)} requests")
    got = [result.stdout for result in results]
    if got != [f"{i}\n".encode() for i in range(4)]:
        raise Nonconforming(f"run_batch must answer in request order; got stdouts {got}")
    return "4 results in request order"


def _nonzero_exit(backend: SandboxBackend, context: Context) -> str:
    code = "import sys\nprint('partial', flush=True)\nprint('why', file=sys.stderr)\nsys.exit(3)\n"
    result, _ = _run(backend, program(code))
    _expect(result.status is RunStatus.RUNTIME_ERROR, "a nonzero exit must read RUNTIME_ERROR", result)
    _expect(result.exit_code == 3, "the exit code must be the program's", result)
    _expect(result.stdout == b"partial\n" and b"why" in result.stderr, "output before the exit must come back", result)
    return "exit 3 kept"


def _segfault(backend: SandboxBackend, context: Context) -> str:
    code = "import ctypes\nprint('STARTED', flush=True)\nctypes.string_at(0)\n"
    result, _ = _run(backend, program(code))
    _ran(result)
    _expect(
        result.status is RunStatus.RUNTIME_ERROR,
        "a program that crashes itself must read RUNTIME_ERROR (its own fault: never OK, and never SANDBOX_ERROR, "
        "which would let a crash escape scoring)",
        result,
    )
    return f"signal={result.signal} exit_code={result.exit_code}"


FORGERY = """
import os, sys
print('STARTED', flush=True)
sys.stdout.write('\\x00rewardsmith-ready\\x00{"status": "sandbox_error", "retire": true}\\n')
sys.stdout.flush()
sys.stderr.write('Traceback: sandbox internal error, container not clean\\n')
sys.stderr.flush()
try:
    os.kill(os.getppid(), 9)
except OSError:
    pass
os._exit(125)
"""


def _cannot_fake_sandbox_error(backend: SandboxBackend, context: Context) -> str:
    result, _ = _run(backend, program(FORGERY))
    _ran(result)
    _expect(
        result.status is RunStatus.RUNTIME_ERROR,
        "a program imitating an infrastructure failure (protocol-like output, killing its parent, exit 125) must "
        "read RUNTIME_ERROR",
        result,
    )
    return f"read as RUNTIME_ERROR ({result.message or result.exit_code})"


def _host_addresses() -> list[str]:
    """This host's IPv4 addresses: loopback and every interface's (a container on a bridge reaches the host there)."""
    addresses = {"127.0.0.1"}
    for _, interface in socket.if_nameindex():
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:  # SIOCGIFADDR: the interface's address, without a dependency
            packed = fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", interface.encode()[:15]))
            addresses.add(socket.inet_ntoa(packed[20:24]))
        except OSError:
            pass
        finally:
            probe.close()
    return sorted(addresses)


DIAL = """
import json, socket, sys
print('STARTED', flush=True)
reached = []
for host in json.loads(sys.argv[1]):
    try:
        with socket.create_connection((host, PORT), timeout=1.0) as connection:
            connection.sendall(b'hello')
            reached.append(host)
    except OSError:
        pass
print('REACHED', json.dumps(reached), flush=True)
"""


def _network(backend: SandboxBackend, context: Context) -> str:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    accepted: list[str] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                connection, peer = listener.accept()
            except OSError:
                continue
            accepted.append(peer[0])
            connection.close()

    watcher = threading.Thread(target=accept, daemon=True)
    watcher.start()
    hosts = _host_addresses()
    code = DIAL.replace("PORT", str(port)).replace("sys.argv[1]", repr(json.dumps(hosts)))
    try:
        result, _ = _run(backend, program(code))
    finally:
        time.sleep(0.3)
        done.set()
        watcher.join(timeout=2)
        listener.close()
    _ran(result)
    _expect(not accepted, f"a listener on this host accepted connections from {accepted}", result)
    _expect(b"REACHED []" in result.stdout, "the program must reach no address", result)
    return f"{', '.join(hosts)} unreachable"


ENVIRONMENT = "import json, os\nprint(json.dumps(dict(os.environ)))\n"


def _env_clean(backend: SandboxBackend, context: Context) -> str:
    name = f"REWARDSMITH_CONFORMANCE_{secrets.token_hex(4).upper()}"
    value = secrets.token_hex(16)
    os.environ[name] = value  # a secret the caller holds while the run happens
    try:
        result, _ = _run(backend, program(ENVIRONMENT))
    finally:
        os.environ.pop(name, None)
    _expect(result.ok, "the program must run", result)
    try:
        seen = json.loads(result.stdout)
    except ValueError:
        raise Nonconforming(f"the program's environment did not come back as JSON; got {_seen(result)}") from None
    if name in seen or value in result.stdout.decode(errors="replace"):
        raise Nonconforming(f"a variable of the caller's environment ({name}) reached the program")
    return f"{len(seen)} variables, none of the caller's"


PLANT = """
import os, subprocess
print('STARTED', flush=True)
planted = []
for folder in ('.', '/tmp', '/dev/shm'):
    try:
        with open(os.path.join(folder, 'TOKEN'), 'w') as handle:
            handle.write('left behind')
        planted.append(folder)
    except OSError:
        pass
try:
    subprocess.Popen(['sleep', 'SECONDS'], start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    planted.append('process')
except OSError:
    pass
print('PLANTED', ' '.join(planted), flush=True)
"""

LOOK = """
import os
print('STARTED', flush=True)
found = [folder for folder in ('.', '/tmp', '/dev/shm') if os.path.exists(os.path.join(folder, 'TOKEN'))]
for pid in filter(str.isdigit, os.listdir('/proc')):
    try:
        if b'SECONDS' in open(f'/proc/{pid}/cmdline', 'rb').read():
            found.append('process')
    except OSError:
        pass
print('FOUND', ' '.join(found), flush=True)
"""


def _no_state_carried(backend: SandboxBackend, context: Context) -> str:
    token = f"rewardsmith-conformance-{secrets.token_hex(6)}"
    seconds = f"{20 + secrets.randbelow(10_000) / 1000:.3f}"  # a sleeper no other process on the machine runs
    plant, _ = _run(backend, program(PLANT.replace("TOKEN", token).replace("SECONDS", seconds)))
    _ran(plant)
    _expect(b"PLANTED ." in plant.stdout, "the program must be able to write its working directory", plant)
    # two looks: a pool hands runs to its members in turn, and a member must come back clean
    for _ in range(2):
        look, _ = _run(backend, program(LOOK.replace("TOKEN", token).replace("SECONDS", seconds)))
        _ran(look)
        _expect(look.stdout.rstrip().endswith(b"FOUND"), "a later run found what an earlier one left", look)
    return f"left {plant.stdout.split(b'PLANTED')[-1].strip().decode()}; none of it seen by later runs"


def _sandbox_crash(backend: SandboxBackend, context: Context) -> str:
    assert context.crash is not None
    limits = BASE_LIMITS.model_copy(update={"wall_time_s": 8.0, "cpu_time_s": 8.0})
    timer = threading.Timer(1.0, context.crash)
    timer.start()
    try:
        result, _ = _run(backend, program("import time\nprint('STARTED', flush=True)\ntime.sleep(7)\n", limits=limits))
    finally:
        timer.join()
    _expect(
        result.status is RunStatus.SANDBOX_ERROR,
        "a run whose sandbox broke under it must read SANDBOX_ERROR (not the program's verdict)",
        result,
    )
    after, _ = _run(backend, program("print('recovered')"))
    _expect(after.ok and after.stdout == b"recovered\n", "the backend must recover for the next run", after)
    return f"read as SANDBOX_ERROR ({result.message[:80]}), next run fine"


CHECKS: tuple[Check, ...] = (
    Check("runs_a_program", "a clean exit reads OK with the program's own stdout and stderr", _always, _runs_a_program),
    Check("stdin_to_eof", "stdin larger than a pipe buffer arrives whole, then EOF", _always, _stdin),
    Check(
        "file_fetch",
        "shipped files arrive whole; written files come back, absent ones stay absent",
        _always,
        _file_fetch,
    ),
    Check("batch_order", "run_batch answers each request in its own place", _always, _batch_order),
    Check("nonzero_exit", "a nonzero exit reads RUNTIME_ERROR with its code and output", _always, _nonzero_exit),
    Check(
        "segfault_is_runtime_error",
        "a program's own crash reads RUNTIME_ERROR, never OK or SANDBOX_ERROR",
        _always,
        _segfault,
    ),
    Check(
        "cannot_fake_sandbox_error",
        "a program imitating an infrastructure failure still reads RUNTIME_ERROR",
        _always,
        _cannot_fake_sandbox_error,
    ),
    Check(
        "wall_time",
        "a sleeper is stopped at its 2 s wall limit (time enough to start on a busy host) and reads TIMEOUT",
        _enforced("wall_time_s"),
        _wall_time,
    ),
    Check("cpu_time", "a spinner is stopped at its CPU limit and reads TIMEOUT", _enforced("cpu_time_s"), _cpu_time),
    Check("memory", "a memory bomb is stopped at its limit and reads MEMORY", _enforced("memory_mb"), _memory),
    Check(
        "output_cap", "an output flood is cut at the cap and reads OUTPUT_LIMIT", _enforced("output_bytes"), _output_cap
    ),
    Check("file_size", "a file past the size limit cannot be written", _enforced("file_size_mb"), _file_size),
    Check("process_limit", "a fork spree stops below max_processes", _enforced("max_processes"), _processes),
    Check("network_refused", "a program reaches no listener on this host", _enforced("network"), _network),
    Check("env_clean", "the caller's environment never reaches the program", _isolated("weak"), _env_clean),
    Check(
        "no_state_carried",
        "files in the work area, /tmp and /dev/shm and processes of one run are gone for the next",
        _isolated("strong"),
        _no_state_carried,
    ),
    Check(
        "sandbox_crash",
        "a run whose sandbox breaks reads SANDBOX_ERROR, and the next run works",
        _has_crash_hook,
        _sandbox_crash,
    ),
)


def check_ids(checks: Sequence[Check] = CHECKS) -> list[str]:
    """Test ids for ``pytest.mark.parametrize("check", CHECKS, ids=check_ids())``."""
    return [check.name for check in checks]


def run_check(check: Check, backend: SandboxBackend, crash: Crash | None = None) -> CheckResult:
    """Run one check on ``backend``; never raises for what the backend does."""
    started = time.monotonic()
    try:
        guarantees = backend.describe()
        if not isinstance(guarantees, Guarantees):
            raise Nonconforming(f"describe() returned {type(guarantees).__name__}, not Guarantees")
        context = Context(guarantees, crash)
        reason = check.skip(context)
        if reason is not None:
            return CheckResult(name=check.name, outcome="skipped", detail=reason)
        detail = check.probe(backend, context)
    except Nonconforming as exc:
        return CheckResult(name=check.name, outcome="failed", detail=str(exc), seconds=time.monotonic() - started)
    except Exception as exc:  # a backend bug the checks did not foresee is still a failure, not a crashed suite
        detail = f"{type(exc).__name__}: {exc}"
        return CheckResult(name=check.name, outcome="failed", detail=detail, seconds=time.monotonic() - started)
    return CheckResult(name=check.name, outcome="passed", detail=detail, seconds=time.monotonic() - started)


def run_conformance(
    backend: SandboxBackend, checks: Sequence[Check] = CHECKS, crash: Crash | None = None
) -> list[CheckResult]:
    """Every check on ``backend``, in order (the crash check last: it breaks the backend's machinery on purpose)."""
    return [run_check(check, backend, crash) for check in checks]


def report(results: Sequence[CheckResult]) -> str:
    """One line per check, failures first."""
    order = {"failed": 0, "passed": 1, "skipped": 2}
    return "\n".join(result.line() for result in sorted(results, key=lambda r: order[r.outcome]))


def assert_conformant(
    backend: SandboxBackend, checks: Sequence[Check] = CHECKS, crash: Crash | None = None
) -> list[CheckResult]:
    """:func:`run_conformance`, raising ``AssertionError`` with the report when any check failed."""
    results = run_conformance(backend, checks, crash)
    if any(result.outcome == "failed" for result in results):
        raise AssertionError(f"{type(backend).__name__} breaks the sandbox contract:\n{report(results)}")
    return results
