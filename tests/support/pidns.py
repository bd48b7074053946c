"""Run a test module inside a fresh PID namespace, so hostile programs that escape a sandbox still cannot
signal or trace the host's processes."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

ENV_FLAG = "REWARDSMITH_TEST_PIDNS"
IN_OWN_PID_NAMESPACE = os.environ.get(ENV_FLAG) == "1"
ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def can_unshare_pid() -> bool:
    """True where ``unshare --pid --fork --mount-proc`` works (root, util-linux present)."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True, timeout=30, check=False
    )
    return probe.returncode == 0


def run_module_in_pid_namespace(module: str, timeout_s: float = 900) -> subprocess.CompletedProcess[str]:
    """Run ``pytest MODULE`` as PID 1's child in a new PID namespace with its own /proc."""
    env = {**os.environ, ENV_FLAG: "1"}
    argv = ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-m", "pytest", module, "-q", "-rs",
            "-p", "no:cacheprovider"]  # fmt: skip
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
