"""verifiers 0.3.1 (the last release with ``vf.Rubric``): the Rubric adapter's real-verifiers tests, for real.

verifiers 0.3.1 needs websockets<17 (through openai-agents), which the dev set cannot hold, so it lives in its own
virtual environment (the ``.ci/run`` step "verifiers environments" also builds this one, at
``$REWARDSMITH_VERIFIERS_LEGACY_VENV``, default ``/opt/rewardsmith-verifiers-0.3``). Here the tests of
``test_verifiers_adapter.py`` that drive a real ``Rubric`` (``score_rollout``, ``score_group``,
``SingleTurnEnv.evaluate``), which skip in the dev environment, run under that environment's pytest and must pass,
none skipped.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("REWARDSMITH_VERIFIERS_LEGACY_VENV", "/opt/rewardsmith-verifiers-0.3"))
PYTHON = VENV / "bin" / "python"

pytestmark = pytest.mark.slow


def legacy_python() -> Path:
    if not PYTHON.exists():
        pytest.skip(
            f"no verifiers 0.3.1 environment at {VENV}: the .ci/run step 'verifiers environments' builds it "
            "(python3 -m venv /opt/rewardsmith-verifiers-0.3; pip install 'verifiers==0.3.1' pytest pytest-timeout; "
            "pip install -e .)"
        )
    return PYTHON


def test_the_rubric_adapter_drives_a_real_verifiers_0_3_rubric():
    python = str(legacy_python())
    version = subprocess.run(
        [python, "-c", "import verifiers; print(verifiers.__version__)"], capture_output=True, text=True, timeout=300
    )
    assert version.returncode == 0 and version.stdout.strip().startswith("0.3."), version.stderr[-2000:]
    proc = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "-k", "real",
         "tests/trainers/test_verifiers_adapter.py"],
        capture_output=True, text=True, timeout=900, cwd=ROOT, env={**os.environ, "PYTHONPATH": ""},
    )  # fmt: skip
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) == 3 and "skipped" not in summary, summary
