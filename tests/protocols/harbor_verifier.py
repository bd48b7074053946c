"""Run a Harbor task's verifier with Harbor's own ``Verifier`` and print what Harbor records, as JSON.

Runs with the Python of the Harbor environment (``$REWARDSMITH_HARBOR_VENV``, Python >= 3.12), one JSON line per
task: ``python harbor_verifier.py BIN_DIR REPO TASK_DIR WORK_DIR [TASK_DIR WORK_DIR ...]``. The task's container is
a bubblewrap container of this machine: the host's system and Python read-only; ``/tests`` (uploaded by Harbor),
``/logs/verifier`` (the trial's verifier folder, mounted as Harbor mounts it) and ``/app`` (the agent's work,
``WORK_DIR/app``) writable; on its ``PATH`` only ``BIN_DIR`` (where the dev environment's ``rewardsmith`` command
lives) and the system. Harbor's ``Verifier.verify`` does the rest exactly as in a trial: removes stale reward
files, uploads ``tests/``, runs ``tests/test.sh`` with its output in ``test-stdout.txt``, reads ``reward.json`` or
``reward.txt``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

from harbor.environments.base import ExecResult
from harbor.models.task.config import TaskOS
from harbor.models.task.task import Task
from harbor.models.trial.error_policy import policy_for
from harbor.models.trial.paths import TrialPaths
from harbor.verifier.verifier import Verifier


class BubblewrapContainer:
    """The few environment calls ``Verifier.verify`` makes, answered by a bubblewrap container on this machine."""

    os = TaskOS.LINUX

    def __init__(self, work: Path, verifier_dir: Path, bin_dir: str, repo: str) -> None:
        self.tests = work / "tests"
        self.app = work / "app"
        self.verifier_dir = verifier_dir
        self.bin_dir = bin_dir
        self.repo = repo
        self.tests.mkdir(parents=True, exist_ok=True)

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None) -> ExecResult:
        argv = ["bwrap", "--die-with-parent", "--unshare-pid", "--unshare-net", "--proc", "/proc", "--dev", "/dev"]
        argv += ["--tmpfs", "/tmp"]  # first: a checkout under /tmp is bound on top of it, not hidden by it
        for path in ("/usr", "/etc", "/root", self.repo):
            argv += ["--ro-bind", path, path]
        for link in ("bin", "lib", "lib64", "sbin"):
            argv += ["--symlink", f"usr/{link}", f"/{link}"]
        argv += ["--bind", str(self.tests), "/tests", "--bind", str(self.app), "/app"]
        argv += ["--bind", str(self.verifier_dir), "/logs/verifier", "--chdir", cwd or "/app", "--clearenv"]
        variables = {"PATH": f"{self.bin_dir}:/usr/bin:/bin", "HOME": "/tmp", "HF_HUB_OFFLINE": "1", **(env or {})}
        for key, value in variables.items():
            argv += ["--setenv", key, value]
        proc = subprocess.run([*argv, "bash", "-c", command], capture_output=True, text=True, timeout=timeout_sec)
        return ExecResult(stdout=proc.stdout, stderr=proc.stderr, return_code=proc.returncode)

    async def upload_dir(self, source_dir, target_dir) -> None:
        assert PurePosixPath(target_dir) == PurePosixPath("/tests"), target_dir
        shutil.copytree(source_dir, self.tests, dirs_exist_ok=True)

    def is_path_mounted(self, environment_path, host_path) -> bool:
        mounted = PurePosixPath(environment_path) == PurePosixPath("/logs/verifier")
        return mounted and Path(host_path) == self.verifier_dir


async def main(task_dir: str, work_dir: str, bin_dir: str, repo: str) -> dict:
    task = Task(task_dir)
    trial = TrialPaths(Path(work_dir) / "trial")
    trial.mkdir()
    container = BubblewrapContainer(Path(work_dir), trial.verifier_dir, bin_dir, repo)
    verifier = Verifier(task=task, trial_paths=trial, environment=container)
    stdout = trial.test_stdout_path
    try:
        result = await verifier.verify()
    except Exception as exc:
        policy = policy_for(type(exc).__name__)
        return {
            "rewards": None,
            "exception": type(exc).__name__,
            "has_valid_reward": policy.has_valid_reward,
            "test_stdout": stdout.read_text() if stdout.exists() else "",
        }
    return {"rewards": result.rewards, "exception": None, "test_stdout": stdout.read_text() if stdout.exists() else ""}


if __name__ == "__main__":
    bin_dir, repo, *pairs = sys.argv[1:]
    for task_dir, work_dir in zip(pairs[::2], pairs[1::2], strict=True):
        print(json.dumps(asyncio.run(main(task_dir, work_dir, bin_dir, repo))), flush=True)
