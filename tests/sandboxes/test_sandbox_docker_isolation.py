"""A pooled Docker container never lets a run see an earlier one, and nothing a run makes outlives it.

One container serves every run here in turn (``concurrency=1``), which is the case that matters: the same
container, its IPC namespace and its tmpfs areas are reused. The programs are in
``tests/support/isolation_programs.py``; the seccomp profile's own checks (io_uring, AF_NETLINK) run with the rest
of the hostile battery in ``test_sandbox_docker_security.py``.
"""

from __future__ import annotations

import json

import pytest

from rewardsmith.sandboxes.base import Limits, RunRequest, RunStatus
from rewardsmith.sandboxes.docker.backend import DockerSandbox
from rewardsmith.sandboxes.docker.seccomp_profile import seccomp_profile, seccomp_security_opt
from tests.support.docker_engine import require_docker
from tests.support.isolation_programs import (
    assert_no_run_sees_an_earlier_one,
    assert_shared_memory_dies_with_each_run,
    assert_writable_areas_are_capped_tmpfs,
    new_token,
    scanner_report,
    scanner_request,
)


@pytest.fixture(scope="module")
def box():
    require_docker()
    sandbox = DockerSandbox(concurrency=1)
    yield sandbox
    sandbox.close()


def test_the_profile_denies_what_the_local_tier_denies():
    profile = seccomp_profile()
    assert profile["defaultAction"] == "SCMP_ACT_ALLOW"
    denied = {name for rule in profile["syscalls"] if "args" not in rule for name in rule["names"]}
    assert {"io_uring_setup", "io_uring_enter", "ptrace", "bpf", "unshare", "keyctl", "userfaultfd"} <= denied
    socket_rule = next(rule for rule in profile["syscalls"] if "socket" in rule["names"])
    assert socket_rule["args"] == [{"index": 0, "value": 1, "op": "SCMP_CMP_NE"}]  # AF_UNIX only
    assert json.loads(seccomp_security_opt().removeprefix("seccomp=")) == profile


@pytest.mark.docker
def test_a_scanner_finds_no_token_of_an_earlier_run(box):
    assert_no_run_sees_an_earlier_one(box)


@pytest.mark.docker
def test_shared_memory_of_a_run_is_gone_after_the_batch(box):
    assert_shared_memory_dies_with_each_run(box)


@pytest.mark.docker
def test_a_planted_segment_does_not_hurt_the_next_honest_run(box):
    """The segment would be charged to the container's memory: the next run must still get all of its limit."""
    hog = "import ctypes\nlibc = ctypes.CDLL(None)\nlibc.shmat.restype = ctypes.c_void_p\n"
    hog += "i = libc.shmget(0, 200 << 20, 0o1600)\nctypes.memset(libc.shmat(i, None, 0), 1, 200 << 20)\n"
    limits = Limits(memory_mb=256, wall_time_s=20, cpu_time_s=20)
    planted = box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": hog}, limits=limits))
    assert planted.status is RunStatus.OK, (planted.status, planted.message, planted.stderr[-500:])
    honest = "block = bytearray(150 << 20)\nblock[::4096] = b'x' * len(block[::4096])\nprint('fits')\n"
    for _ in range(2):
        result = box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": honest}, limits=limits))
        assert (result.status, result.stdout) == (RunStatus.OK, b"fits\n"), (result.message, result.stderr[-500:])


@pytest.mark.docker
def test_a_run_that_kills_its_bootstrap_still_leaves_nothing_behind(box):
    """``kill(-1)`` takes the bootstrap down before its after-run cleanup; the host's cleanup exec does it instead."""
    token = new_token()
    code = (
        "import ctypes, os, signal, time\n"
        "os.kill(-1, signal.SIGKILL)\n"
        "libc = ctypes.CDLL(None)\nlibc.shmat.restype = ctypes.c_void_p\n"
        f"data = b'{token}'\n"
        "i = libc.shmget(0, 4096, 0o1600)\nctypes.memmove(libc.shmat(i, None, 0), data, len(data))\n"
        "open('/tmp/left.txt', 'wb').write(data)\n"
        "time.sleep(30)\n"
    )
    box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": code}, limits=Limits(wall_time_s=3)))
    report = scanner_report(box.run(scanner_request(new_token())))
    assert report["control_found"] and report["tokens"] == [] and report["ipc"] == [], report


@pytest.mark.docker
def test_every_writable_area_is_a_size_capped_tmpfs(box):
    report = assert_writable_areas_are_capped_tmpfs(box, {"/sandbox", "/tmp", "/dev/shm"})
    after = box.run(RunRequest(argv=["sh", "-c", "ls -A /sandbox /tmp /dev/shm | grep -c fill"]))
    assert after.stdout == b"0\n", (after.stdout, report)  # the next run finds the areas empty again
