"""One sample cannot starve its neighbours of CPU: a run is one scheduling entity with a CPU cap, however many
processes it starts.

The hostile run forks many children that each ``setsid`` and spin (so no process group kill and no per-process
rlimit stops them early); while it spins, an honest run that needs a fixed amount of CPU time (measured by itself
with ``time.process_time``) must finish well inside a wall limit that it would miss if the scheduler shared the CPU
per process. Local forkserver tier (a ``cpu`` cgroup per run) and Docker (a CPU quota per container).
"""

from __future__ import annotations

import threading
import time

import pytest

from rewardsmith.sandboxes.base import Limits, RunRequest, RunResult, RunStatus
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.docker_engine import require_docker

SPINNERS = 30
HOSTILE = f"""
import os, time
end = time.monotonic() + 6
for _ in range({SPINNERS}):
    if os.fork() == 0:
        os.setsid()
        while time.monotonic() < end:
            pass
        os._exit(0)
while time.monotonic() < end:
    pass
"""
#: CPU seconds the honest run needs; alone on one core that is its wall time too
HONEST_CPU_S = 0.3
HONEST = f"""
import time
while time.process_time() < {HONEST_CPU_S}:
    pass
print("done")
"""
HOSTILE_LIMITS = Limits(wall_time_s=8, cpu_time_s=8, max_processes=SPINNERS + 4, memory_mb=1024)
#: per-process sharing of two cores with 31 spinners gives the honest run about 2/32 of a core: 4.8 s for its 0.3 s
HONEST_LIMITS = Limits(wall_time_s=3, cpu_time_s=3)


def honest_next_to_spinners(box) -> tuple[RunResult, RunResult]:
    """Start the spinners, let them get going, then run the honest program while they spin."""
    hostile: list[RunResult] = []
    spinner = threading.Thread(
        target=lambda: hostile.append(
            box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": HOSTILE}, limits=HOSTILE_LIMITS))
        )
    )
    spinner.start()
    time.sleep(1.0)
    honest = box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": HONEST}, limits=HONEST_LIMITS))
    spinner.join(30)
    return honest, hostile[0]


def assert_honest_finished(honest: RunResult, hostile: RunResult) -> None:
    assert hostile.status is not RunStatus.SANDBOX_ERROR, hostile.message
    assert (honest.status, honest.stdout) == (RunStatus.OK, b"done\n"), (
        honest.status,
        honest.message,
        honest.wall_time_s,
        honest.stderr[-300:],
    )


def test_local_run_of_setsid_spinners_does_not_starve_its_neighbour():
    box = LocalSandbox(concurrency=2)
    try:
        if box.tier != "bwrap":
            pytest.skip(f"forkserver tier unavailable: {box._startup_error}")
        if "cpu" not in box.cgroup_controllers:
            pytest.skip("no cpu cgroup here: a run's CPU share is per process")
        assert_honest_finished(*honest_next_to_spinners(box))
    finally:
        box.close()


@pytest.mark.docker
def test_docker_run_of_setsid_spinners_does_not_starve_its_neighbour():
    require_docker()
    from rewardsmith.sandboxes.docker.backend import DockerSandbox

    box = DockerSandbox(concurrency=2)
    try:
        box.warm_up()
        assert_honest_finished(*honest_next_to_spinners(box))
    finally:
        box.close()
