"""Time bounds for tests that prove a call cannot hang or that work runs in parallel.

A bound is the promised limit plus *slack* for waking threads and scheduling processes. The slack is not tuned to
one machine: it is measured (how long this machine takes to start a bare interpreter, against what an idle machine
takes) again whenever the last measure is older than :data:`REMEASURE_S`, because a CI runner's load changes during
the session (installs and type checks run beside the tests), and it can be widened by hand with
``REWARDSMITH_TEST_TIME_SCALE`` on a very slow runner.
A parallelism check compares against the serial time instead of a fixed number.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

#: Interpreter start-up (``python -I -S -c pass``) on an idle machine.
IDLE_STARTUP_S = 0.02


#: How long one measure of the load stands.
REMEASURE_S = 15.0
_MEASURED: list[tuple[float, float]] = []  # (when, factor) of the last measure


def load_factor() -> float:
    """How much slower than idle this machine schedules right now (at least 1)."""
    now = time.monotonic()
    if _MEASURED and now - _MEASURED[-1][0] < REMEASURE_S:
        return _MEASURED[-1][1]
    factor = _measure()
    _MEASURED[:] = [(now, factor)]
    return factor


def _measure() -> float:
    samples = []
    for _ in range(3):
        start = time.monotonic()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
        samples.append(time.monotonic() - start)
    measured = sorted(samples)[1] / IDLE_STARTUP_S
    return max(1.0, min(measured, 20.0)) * float(os.environ.get("REWARDSMITH_TEST_TIME_SCALE", "1"))


def slack(seconds: float = 0.1) -> float:
    """``seconds`` of scheduling slack on an idle machine, scaled to this one."""
    return seconds * load_factor()


def deadline_bound(limit_s: float, base_slack_s: float = 0.1) -> float:
    """What a call promised to end within ``limit_s`` may take as seen by the caller: 10 % plus slack."""
    return limit_s * 1.1 + slack(base_slack_s)
