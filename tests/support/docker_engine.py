"""Find (or start, once per test session) the Docker engine and the sandbox image for the docker tests.

``.ci/docker.sh`` is idempotent: it starts ``dockerd`` when no engine answers and builds the image when it is
missing. Tests skip, with the script's own reason, only when the engine truly cannot start here.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rewardsmith.sandboxes.docker.backend import DEFAULT_IMAGE

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "docker.sh"
_state: dict[str, str | None] = {}


def _engine_problem(image: str) -> str | None:
    try:
        import docker

        client = docker.from_env(version="auto", timeout=10)
        client.ping()
        client.images.get(image)
        client.close()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def docker_skip_reason(image: str = DEFAULT_IMAGE) -> str | None:
    """None when the engine answers and ``image`` exists; else why not (after one try of ``.ci/docker.sh``)."""
    if image in _state:
        return _state[image]
    problem = _engine_problem(image)
    if problem is not None:
        try:
            proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, timeout=900)
            script_said = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        except (OSError, subprocess.TimeoutExpired) as exc:
            script_said = [f"{SCRIPT.name} failed: {exc}"]
        problem = _engine_problem(image)
        if problem is not None:
            problem = f"docker engine/image unavailable ({problem}); {SCRIPT.name}: {' | '.join(script_said)}"
            print(f"\nSKIP docker tests: {problem}")
    _state[image] = problem
    return problem


def require_docker(image: str = DEFAULT_IMAGE) -> None:
    reason = docker_skip_reason(image)
    if reason:
        pytest.skip(reason)
