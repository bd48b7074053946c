"""``run_audit`` refuses before judging when the report's plots cannot be drawn (matplotlib unimportable).

The check runs in a child process whose ``sitecustomize`` makes ``import matplotlib`` fail, as on an install
without the ``audit`` extra: the call must name the install and leave no verdict behind, not judge for minutes
and then die while drawing the report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {root!r})
    from rewardsmith.audit.generators import generate_set
    from rewardsmith.audit.pipeline import run_audit
    from tests.support.audit_scripted_judge import ScriptedJudge

    items = generate_set("math", 4, seed=0)
    judge = ScriptedJudge({{it.prompt: it.gold_response for it in items}})
    try:
        run_audit(judge, items, {out!r}, set_name="math", progress=False, n_boot=50)
    except Exception as exc:
        print(json.dumps({{"error": type(exc).__name__, "message": str(exc), "calls": judge.calls}}))
    else:
        print(json.dumps({{"error": None, "calls": judge.calls}}))
""")


def _run_child(tmp_path: Path, *, hide_matplotlib: bool) -> dict:
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    if hide_matplotlib:  # sys.modules[name] = None: every import of it raises ImportError, find_spec finds nothing
        (shim / "sitecustomize.py").write_text("import sys\nsys.modules['matplotlib'] = None\n")
    out = tmp_path / ("run-hidden" if hide_matplotlib else "run")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "REWARDSMITH_CACHE_DIR": str(tmp_path / "cache"),  # record_audited_set writes there
    }
    script = CHILD.format(root=str(REPO_ROOT), out=str(out))
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return {**json.loads(result.stdout.strip().splitlines()[-1]), "out": out}


def test_run_audit_without_matplotlib_refuses_before_judging(tmp_path):
    outcome = _run_child(tmp_path, hide_matplotlib=True)
    assert outcome["error"] == "MissingExtra"
    assert "matplotlib" in outcome["message"] and "pip install 'rewardsmith[audit]'" in outcome["message"]
    assert outcome["calls"] == 0  # nothing judged
    assert not (outcome["out"] / "verdicts.jsonl").exists()


def test_run_audit_with_matplotlib_judges_and_reports(tmp_path):
    """The same child with matplotlib importable runs through: the refusal above is the missing extra's doing."""
    outcome = _run_child(tmp_path, hide_matplotlib=False)
    assert outcome["error"] is None and outcome["calls"] > 0
    assert (outcome["out"] / "verdicts.jsonl").read_text().strip()
    assert (outcome["out"] / "report.html").exists()
