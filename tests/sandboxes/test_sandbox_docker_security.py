"""Every hostile program of ``tests/support/hostile_programs.py`` is contained by the docker sandbox.

The checks are real: a real TCP listener on the host's 127.0.0.1, a real secret file and a real secret
environment variable in this process, the host's process table for orphans (container processes are host
processes, so an escaped orphan would show there). After the hostile cases the pool must still be whole and
serve ordinary programs.
"""

from __future__ import annotations

import os

import pytest

from rewardsmith.sandboxes.base import RunRequest, RunStatus
from rewardsmith.sandboxes.docker.backend import DockerSandbox
from tests.support.containment import check_contained, host  # noqa: F401 - the live host fixture is shared
from tests.support.docker_engine import require_docker
from tests.support.hostile_programs import SANDBOX_ATTACKS, HostileCase, render

pytestmark = pytest.mark.docker

# Docker-specific readings of the shared expectations: the cgroup OOM killer ends a memory bomb with SIGKILL
# (MEMORY), and a fork bomb hits the container's pids limit.
STATUS_OVERRIDES: dict[str, tuple[str, ...]] = {}


def source_for(case: HostileCase, values: dict[str, str]) -> str:
    """The rendered program, with secrets it searches for spelled as hex: the program is written into the
    sandbox's working directory, and finding its own source there is not a leak."""
    code = case.code
    for key in ("SECRET_VALUE", "SECRET_ENV_VALUE"):
        code = code.replace("'{" + key + "}'", f"bytes.fromhex('{values[key].encode().hex()}').decode()")
    return render(code, values)


@pytest.fixture(scope="module")
def box():
    require_docker()
    sandbox = DockerSandbox(concurrency=2)
    yield sandbox
    sandbox.close()


SLOW_CASES = {"infinite_loop", "fork_bomb", "setsid_orphan"}  # about 3 s each here
CASES = [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.id in SLOW_CASES else []) for c in SANDBOX_ATTACKS]


@pytest.mark.parametrize("case", CASES)
def test_hostile_program_is_contained(box, host, case: HostileCase):  # noqa: F811
    values, _ = host
    statuses = STATUS_OVERRIDES.get(case.id, case.statuses)
    check_contained(box, case, host, source_for(case, values), statuses=statuses, slack_s=15)


def test_host_environment_secret_is_really_set(host):  # noqa: F811
    """The environment check can fail: the secret is in this process's environment for the hostile run to seek."""
    values, _ = host
    assert os.environ["REWARDSMITH_TEST_SECRET"] == values["SECRET_ENV_VALUE"]


def test_a_program_cannot_forge_an_infrastructure_failure(box):
    """Printing the bootstrap's failure text and exiting is a program verdict, not a sandbox error (None reward)."""
    code = (
        "import os, sys\nsys.stderr.write('bootstrap: processes of an earlier run survive SIGKILL\\n')\n"
        "os.write(1, b'\\x00rewardsmith-ready\\x00')\nos._exit(3)"
    )
    result = box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": code}))
    assert result.status is RunStatus.RUNTIME_ERROR
    assert result.exit_code == 3


def test_a_program_cannot_reach_the_keepalive_or_init(box):
    code = (
        "import os, signal\nfor pid in (1, 7, 8, 9, 10):\n    try:\n        os.kill(pid, signal.SIGKILL)\n"
        "        print('killed', pid)\n    except OSError as exc:\n        print('denied', pid, exc.errno)"
    )
    result = box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": code}))
    assert b"killed 1" not in result.stdout
    assert box.run(RunRequest(argv=["python3", "-c", "print('alive')"])).stdout == b"alive\n"


def test_pool_is_whole_after_the_hostile_cases(box):
    containers = list(box._idle.queue)
    assert len(containers) == box.config.concurrency
    for container in containers:
        container.handle.reload()
        assert container.handle.status == "running"
    results = box.run_batch([RunRequest(argv=["python3", "-c", f"print({i})"]) for i in range(4)])
    assert [r.stdout for r in results] == [b"0\n", b"1\n", b"2\n", b"3\n"]
