"""The conformance suite (``sandboxes/conformance.py``) on every backend in the table, and on a backend that drops its
limits while claiming them, which only the suite catches.

Each check runs once per backend: the local tiers, docker on the real engine, and ``remote`` against a real
``rewardsmith sandbox serve``. Where a backend has machinery of its own (a forkserver, a container, a server's
worker), the crash hook kills it mid-run for real.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rewardsmith import get_reward
from rewardsmith.reward import ConfigError
from rewardsmith.sandboxes.base import ALL_LIMITS, Guarantees, RunRequest, RunResult, SandboxBackend
from rewardsmith.sandboxes.conformance import CHECKS, Check, CheckResult, assert_conformant, check_ids, run_conformance
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.sandbox_server import sandbox_server

REPO = Path(__file__).resolve().parents[2]
Subject = tuple[SandboxBackend, Callable[[], None] | None]


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``, read from ``/proc``."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except (OSError, ValueError):
            continue
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            found.append(int(entry))
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL a process and everything under it (a forkserver is bwrap, bwrap's init and the Python inside)."""
    victims, queue = [], [pid]
    while queue:
        victims.append(queue.pop())
        queue.extend(children(victims[-1]))
    for victim in victims:
        try:
            os.kill(victim, signal.SIGKILL)
        except OSError:
            pass


def local_tier(tier: str) -> Iterator[Subject]:
    isolation = "weak" if tier == "subprocess" else "strong"
    sandbox = LocalSandbox(tier=tier, isolation=isolation)  # type: ignore[arg-type]
    if sandbox.tier != tier:
        pytest.skip(f"the {tier!r} tier is unavailable here")

    def crash() -> None:  # every forkserver, the busy one mid-run and the idle ones before their next run
        servers = list(sandbox._all)
        for server in servers:
            kill_tree(server.process.pid)
        for server in servers:  # the crash is over when they are gone; the backend must notice before reusing one
            server.process.wait(timeout=10)

    yield sandbox, crash if tier == "bwrap" else None  # the other tiers have no machinery beside the program
    sandbox.close()


@pytest.fixture(scope="module")
def bwrap() -> Iterator[Subject]:
    yield from local_tier("bwrap")


@pytest.fixture(scope="module")
def bwrap_exec() -> Iterator[Subject]:
    yield from local_tier("bwrap-exec")


@pytest.fixture(scope="module")
def subprocess_tier() -> Iterator[Subject]:
    yield from local_tier("subprocess")


@pytest.fixture(scope="module")
def docker() -> Iterator[Subject]:
    from rewardsmith.sandboxes.docker.backend import DockerSandbox
    from tests.support.docker_engine import require_docker

    require_docker()
    sandbox = DockerSandbox(concurrency=2)

    def crash() -> None:  # every container of the pool: the busy one mid-run, the idle one before its next run
        for container_id in list(sandbox._all):
            try:
                sandbox.client.containers.get(container_id).kill()
            except Exception:
                pass

    yield sandbox, crash
    sandbox.close()


@pytest.fixture(scope="module")
def remote() -> Iterator[Subject]:
    from rewardsmith.sandboxes.fusion.client import RemoteSandbox

    before = set(children(os.getpid()))
    with sandbox_server(max_run_timeout=10) as url:
        (server,) = set(children(os.getpid())) - before

        def crash() -> None:  # the server's own workers (its local sandbox's forkservers); the server lives on
            for child in children(server):
                kill_tree(child)

        yield RemoteSandbox(url, retries=1, backoff_s=0.05), crash


BACKENDS = [
    "bwrap",
    "bwrap_exec",
    "subprocess_tier",
    pytest.param("docker", marks=pytest.mark.docker),
    "remote",
]
Verdicts = tuple[dict[str, dict[str, CheckResult]], dict[str, str]]


@pytest.fixture(scope="module")
def verdicts(request: pytest.FixtureRequest) -> Verdicts:
    """The selected checks on their backends, the backends side by side (each runs its checks in order, one at a
    time), so the file takes about as long as its slowest backend rather than all of them in turn; and why a backend
    was skipped (no engine, no tier)."""
    wanted: dict[str, set[str]] = {}
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and getattr(item, "originalname", "") == "test_every_backend_keeps_what_it_promises":
            wanted.setdefault(callspec.params["backend"], set()).add(callspec.params["check"].name)
    subjects: dict[str, Subject] = {}
    skipped: dict[str, str] = {}
    for name in sorted(wanted):
        try:
            subjects[name] = request.getfixturevalue(name)
        except pytest.skip.Exception as exc:
            skipped[name] = str(exc)
    with ThreadPoolExecutor(max_workers=max(1, len(subjects))) as pool:
        running = {
            name: pool.submit(run_conformance, box, [c for c in CHECKS if c.name in wanted[name]], crash)
            for name, (box, crash) in subjects.items()
        }
        results = {name: {r.name: r for r in future.result()} for name, future in running.items()}
    return results, skipped


@pytest.mark.parametrize("check", CHECKS, ids=check_ids())
@pytest.mark.parametrize("backend", BACKENDS)
def test_every_backend_keeps_what_it_promises(backend: str, check: Check, verdicts: Verdicts) -> None:
    results, skipped = verdicts
    if backend in skipped:
        pytest.skip(skipped[backend])
    result = results[backend][check.name]
    if result.outcome == "skipped":
        pytest.skip(result.detail)
    assert result.outcome == "passed", result.detail


# -- a backend that drops its limits --------------------------------------------------------------------------------

DROPPED = {"memory_mb": 1 << 16, "output_bytes": 1 << 30, "max_processes": 1 << 16, "file_size_mb": 1 << 16}
#: what the suite must catch on it (and it does not claim weak isolation, so the shared /tmp shows)
DROPPED_CHECKS = {"memory", "output_cap", "file_size", "process_limit", "network_refused", "no_state_carried"}


class DropsLimits(LocalSandbox):
    """A backend as one might sketch it: runs go through (the local subprocess tier, time limits kept), the memory,
    output, process and file limits are dropped on the way in, the network and /tmp are the host's, and it
    describes itself as if it kept them all."""

    name = "drops-limits"

    def __init__(self) -> None:
        super().__init__(tier="subprocess", isolation="weak")

    def describe(self) -> Guarantees:
        return Guarantees(isolation="strong", enforces=ALL_LIMITS, where="this machine")

    def run(self, request: RunRequest) -> RunResult:
        unlimited = request.limits.model_copy(update=DROPPED)
        return super().run(request.model_copy(update={"limits": unlimited}))


HUNGRY_ADD = "```python\nHELD = b'x' * (256 << 20)\n\ndef add(a, b):\n    return a + b\n```"
ADD_CALLS = {"language": "python", "fn_name": "add", "calls": [{"args": [1, 2], "expected": 3}]}


def test_code_tests_alone_cannot_tell_a_backend_that_drops_limits() -> None:
    """Why the suite exists: on the sketched backend, a solution holding 256 MiB under a 64 MiB limit is paid 1.0;
    on the real one it is stopped (0.0). Nothing in the verdicts says which backend ran."""
    scores = {}
    for name, backend in (("real", LocalSandbox(tier="subprocess", isolation="weak")), ("sketched", DropsLimits())):
        reward = get_reward("code_tests", isolation="weak", memory_mb=64)
        reward._backend = backend
        try:
            scores[name] = reward([HUNGRY_ADD], tests=[ADD_CALLS])[0]
        finally:
            reward.close()
    assert scores == {"real": 0.0, "sketched": 1.0}


LIMIT_CHECKS = [c for c in CHECKS if c.name in {"runs_a_program", *DROPPED_CHECKS}]


def test_the_suite_fails_a_backend_that_drops_its_limits() -> None:
    sketched = DropsLimits()
    try:
        results = {result.name: result for result in run_conformance(sketched, checks=LIMIT_CHECKS)}
        memory = [check for check in CHECKS if check.name == "memory"]
        with pytest.raises(AssertionError, match=r"DropsLimits breaks the sandbox contract:\nFAILED  memory"):
            assert_conformant(sketched, checks=memory)
    finally:
        sketched.close()
        for leftover in glob.glob("/tmp/rewardsmith-conformance-*") + glob.glob("/dev/shm/rewardsmith-conformance-*"):
            os.unlink(leftover)
    failed = {name for name, result in results.items() if result.outcome == "failed"}
    assert failed == DROPPED_CHECKS, {name: result.detail for name, result in results.items()}
    assert "got 256 MiB under a 64 MiB limit" in results["memory"].detail
    assert "accepted connections" in results["network_refused"].detail
    assert "found what an earlier one left" in results["no_state_carried"].detail
    assert results["runs_a_program"].outcome == "passed"


class CompletionOrder(LocalSandbox):
    """A batch handed back as its runs finish, the slip a hand-written ``run_batch`` makes."""

    def run_batch(self, requests: Sequence[RunRequest], concurrency: int | None = None) -> list[RunResult]:
        return sorted(super().run_batch(requests, concurrency), key=lambda result: result.wall_time_s)


def test_the_suite_fails_a_batch_answered_in_completion_order() -> None:
    backend = CompletionOrder(tier="subprocess", isolation="weak")
    try:
        (result,) = run_conformance(backend, checks=[check for check in CHECKS if check.name == "batch_order"])
    finally:
        backend.close()
    assert result.outcome == "failed" and "must answer in request order" in result.detail, result


# -- what code_tests accepts ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("guarantees", "needs", "isolation", "problem"),
    [
        (Guarantees(isolation="strong", enforces=ALL_LIMITS), ALL_LIMITS, "strong", None),
        (Guarantees(isolation="weak", enforces=ALL_LIMITS), frozenset(), "strong", "its isolation is weak"),
        (Guarantees(isolation="weak", enforces=ALL_LIMITS), frozenset(), "weak", None),
        (Guarantees(isolation="none", enforces=ALL_LIMITS), frozenset(), "weak", "its isolation is none"),
        (
            Guarantees(isolation="strong", enforces=frozenset({"wall_time_s"})),
            frozenset({"wall_time_s", "memory_mb", "network"}),
            "strong",
            "it does not enforce memory_mb, network",
        ),
    ],
)
def test_guarantees_shortfall(guarantees, needs, isolation, problem) -> None:
    said = guarantees.shortfall(needs, isolation)
    assert said == problem if problem is None else problem in said


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"isolation": "weak"},
        {"backend": "docker"},
        {"backend": "remote", "base_url": "http://127.0.0.1:9"},
    ],
)
def test_code_tests_accepts_the_builtin_backends_without_starting_them(config) -> None:
    reward = get_reward("code_tests", **config)
    assert reward._backend is None


def test_code_tests_refuses_options_its_backend_refuses_at_construction() -> None:
    with pytest.raises(ConfigError, match="cannot open sandbox backend 'local': tier 'subprocess' is weak"):
        get_reward("code_tests", backend_options={"tier": "subprocess"})


PLUGINS = '''
from rewardsmith.sandboxes.base import Guarantees
from rewardsmith.sandboxes.local.backend import LocalSandbox


class Unconfined(LocalSandbox):
    """Honest about it: runs with a time limit only, on this machine as it is."""

    name = "unconfined"

    def __init__(self, **options):
        super().__init__(tier="subprocess", isolation="weak")

    def describe(self):
        return Guarantees(isolation="none", enforces=frozenset({"wall_time_s", "cpu_time_s"}), where="the caller's")


class Silent(LocalSandbox):
    """Written before backends described themselves."""

    name = "silent"
    describe = None
'''

PROBE = """
import json
from rewardsmith import get_reward
from rewardsmith.reward import ConfigError

said = {}
for name in ("unconfined", "silent"):
    for isolation in ("strong", "weak"):
        try:
            get_reward("code_tests", backend=name, isolation=isolation)
            said[f"{name}/{isolation}"] = "accepted"
        except ConfigError as exc:
            said[f"{name}/{isolation}"] = str(exc)
print(json.dumps(said))
"""


def test_code_tests_refuses_a_plugin_backend_that_promises_too_little(tmp_path) -> None:
    """Third-party backends arrive through the entry-point group, as a real package would add them."""
    (tmp_path / "rk_loose_sandboxes.py").write_text(textwrap.dedent(PLUGINS))
    dist = tmp_path / "rk_loose_sandboxes-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rk-loose-sandboxes\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[rewardsmith.sandboxes]\nunconfined = rk_loose_sandboxes:Unconfined\nsilent = rk_loose_sandboxes:Silent\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    said = json.loads(proc.stdout.strip().splitlines()[-1])
    for key, message in said.items():
        assert message.startswith(f"code_tests cannot trust sandbox backend '{key.split('/')[0]}': "), message
        assert "to fix: " in message and "\n" not in message, message
    assert "its isolation is none (the caller's); it does not enforce memory_mb, network" in said["unconfined/strong"]
    assert "its isolation is none (the caller's); it does not enforce memory_mb;" in said["unconfined/weak"]
    assert "it does not say what it guarantees (no describe())" in said["silent/strong"]
