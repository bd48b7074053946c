"""No run sees an earlier run, and no kernel object outlives its run: both local tiers and the remote server.

The programs are in ``tests/support/isolation_programs.py``: honest runs leave a token wherever honest output goes
(stdout, a fetched ``answer.txt``, ``/tmp``, ``/dev/shm``, memory), a hostile planter leaves one in every shared
kernel object it can reach, and a scanner reads all the memory, files and IPC objects it can see. One worker per
backend, so the same warm forkserver (or the same server process) serves them all in turn. The planter leaves
orphans behind, so like ``test_sandbox_security.py`` this module runs inside its own PID namespace when the
session collects ``test_hostile_in_pidns.py``.
"""

from __future__ import annotations

import pytest

from rewardsmith.sandboxes.base import Limits, RunRequest, RunStatus
from rewardsmith.sandboxes.fusion.client import RemoteSandbox
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.isolation_programs import (
    assert_no_run_sees_an_earlier_one,
    assert_shared_memory_dies_with_each_run,
    assert_writable_areas_are_capped_tmpfs,
    honest_request,
    new_token,
    scanner_report,
    scanner_request,
)
from tests.support.sandbox_server import sandbox_server


@pytest.fixture(scope="module", params=["bwrap", "bwrap-exec", "remote"])
def box(request):
    """The warm forkserver, one bwrap per run, and a real ``rewardsmith sandbox serve`` on 127.0.0.1."""
    if request.param == "remote":
        probe = LocalSandbox(tier="bwrap")
        if probe.tier != "bwrap":
            pytest.skip(f"the server's local backend needs the forkserver tier: {probe._startup_error}")
        probe.close()
        with sandbox_server(max_run_timeout=60) as url:
            sandbox = RemoteSandbox(base_url=url, concurrency=1)
            yield sandbox
            sandbox.close()
        return
    sandbox = LocalSandbox(tier=request.param, concurrency=1)
    if sandbox.tier != request.param:
        pytest.skip(f"the {request.param!r} tier is unavailable here: {sandbox._startup_error}")
    yield sandbox
    sandbox.close()


def test_a_scanner_finds_no_token_of_an_earlier_run(box):
    assert_no_run_sees_an_earlier_one(box)


def test_runs_in_parallel_do_not_see_each_other(box):
    """Scanners running at the same time as honest runs (two workers): none finds anything but its own control."""
    tokens = [new_token() for _ in range(4)]
    requests = [request for token in tokens for request in (honest_request(token), scanner_request(new_token()))]
    results = box.run_batch(requests, concurrency=2)
    assert all(result.ok for result in results[::2]), [(r.status, r.message) for r in results[::2]]
    reports = [scanner_report(result) for result in results[1::2]]
    assert all(report["control_found"] and report["tokens"] == [] for report in reports), reports


def test_shared_memory_of_a_run_is_gone_after_the_batch(box):
    assert_shared_memory_dies_with_each_run(box)


def test_a_planted_segment_does_not_hurt_the_next_honest_run(box):
    """A run leaves a segment as big as the next run's whole memory limit: the next run still gets all of it."""
    hog = "import ctypes\nlibc = ctypes.CDLL(None)\nlibc.shmat.restype = ctypes.c_void_p\n"
    hog += "i = libc.shmget(0, 200 << 20, 0o1600)\nctypes.memset(libc.shmat(i, None, 0), 1, 200 << 20)\n"
    limits = Limits(memory_mb=256, wall_time_s=20, cpu_time_s=20)
    planted = box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": hog}, limits=limits))
    assert planted.status is RunStatus.OK, (planted.status, planted.message, planted.stderr[-500:])
    honest = "block = bytearray(150 << 20)\nblock[::4096] = b'x' * len(block[::4096])\nprint('fits')\n"
    result = box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": honest}, limits=limits))
    assert (result.status, result.stdout) == (RunStatus.OK, b"fits\n"), (result.message, result.stderr[-500:])


def test_every_writable_area_is_a_size_capped_tmpfs(box):
    """Writing past the cap fails inside the run, and no host directory is writable (``bwrap-exec`` included)."""
    assert_writable_areas_are_capped_tmpfs(box, {"/work", "/tmp", "/dev/shm"})
