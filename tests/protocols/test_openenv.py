"""A reward spec as an OpenEnv rubric: a real OpenEnv 0.3.0 environment served by OpenEnv's own HTTP server.

openenv-core 0.3.0 pulls gradio and fastmcp, so it lives in its own virtual environment (``$REWARDSMITH_OPENENV_VENV``,
default ``/opt/rewardsmith-openenv``: ``pip install openenv-core==0.3.0`` and ``pip install -e .`` of this checkout).
``openenv_env.py`` runs there; what its client received is checked here.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from rewardsmith.adapters.protocols.openenv import INSTALL_HINT, rubric_classes, spec_rubric

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("REWARDSMITH_OPENENV_VENV", "/opt/rewardsmith-openenv"))
SPEC = "rewards:\n  - {name: math_equivalence, weight: 1.0}\n  - {name: think_format, weight: 0.25}\n"

#: (task, completion, expected reward (None: OpenEnv's "no reward"), why)
TABLE = [
    ("add", "<think>2 and 2</think> \\boxed{4}", 1.25, "right answer, well formatted"),
    ("add", "<think>hm</think> \\boxed{5}", 0.25, "wrong answer, well formatted"),
    ("half", "\\boxed{\\frac{1}{2}}", 1.0, "right answer, no reasoning block"),
    ("no_gold", "<think>x</think> \\boxed{4}", None, "no gold: no reward, never a 0"),
]


@pytest.mark.slow
def test_openenv_server_steps_return_the_spec_reward(tmp_path):
    python = VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no OpenEnv environment at {VENV} (python3 -m venv; pip install openenv-core==0.3.0 -e .)")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    cases = [{"task": task, "message": text} for task, text, *_ in TABLE]
    proc = subprocess.run(
        [str(python), str(ROOT / "tests" / "protocols" / "openenv_env.py"), str(spec)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": "", "HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    for received, (_, _, reward, why) in zip(result["received"], TABLE, strict=True):
        assert received["status"] == 200, (why, received)
        assert received["reward"] == reward, (why, received)
        assert received["done"] is True
        if reward is None:
            assert received["observation"]["reason"].startswith("unscorable: math_equivalence: no gold"), received
    # each term is a child rubric with its own last_score, as OpenEnv's introspection shows them
    assert result["terms"] == {"math_equivalence": 1.0, "think_format": 1.0}
    assert result["reward"] == 1.25


def test_without_openenv_the_rubric_names_the_install():
    try:
        import openenv  # noqa: F401
    except ImportError:
        rubric_classes.cache_clear()
        with pytest.raises(ImportError, match="openenv-core"):
            spec_rubric(["think_format"])
    else:
        pytest.skip("OpenEnv is installed in this environment")
    assert "openenv-core" in INSTALL_HINT
