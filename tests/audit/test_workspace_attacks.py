"""Workspace attacks against ``code_tests`` on the real local sandbox: every probe scores 0.0, every control 1.0.

The probes (:mod:`rewardsmith.hackaudit.attacks.workspace`) plant report-rewriting hooks, edit the tests they find,
write reward files, hunt for answer keys and patch the interpreter. Three facts are checked, each against the real
sandbox and the real reward: the probes do what they say when run (a zero from a probe that never ran would prove
nothing); none of them is paid on any test form (calls, asserts, stdio, KodCode pytest, HumanEval ``check``); and
nothing they wrote reached the host (the sandbox's workspace and ``/tmp`` die with the run).
"""

from __future__ import annotations

import json
import re
import site
import time
from pathlib import Path

import pytest

from rewardsmith.hackaudit.attacks import get_attack, select_attacks
from rewardsmith.hackaudit.attacks.workspace import MARKER
from rewardsmith.hackaudit.controls import row_context
from rewardsmith.hackaudit.runner import VERDICTS_FILE, load_raw_spec, run_reward_audit
from rewardsmith.hackaudit.spec_kinds import profile_spec
from rewardsmith.sandboxes.base import RunRequest
from rewardsmith.sandboxes.local.backend import LocalSandbox

SAMPLES = Path(__file__).resolve().parents[2] / "rewardsmith" / "samples"
CODE_SPEC = SAMPLES / "hack_code_spec.yaml"
ADD = "def add(a, b):\n    return a + b\n"
FORMS = {
    "calls": {
        "language": "python",
        "fn_name": "add",
        "calls": [{"args": [1, 2], "expected": 3}, {"args": [10, 5], "expected": 15}],
    },
    "asserts": {"language": "python", "asserts": ["assert add(1, 2) == 3", "assert add(-4, 5) == 1"]},
    "stdio": {
        "language": "python",
        "stdio": [{"input": "1 2\n", "output": "3\n2\n"}, {"input": "10 5\n", "output": "15\n50\n"}],
    },
    "pytest": {
        "language": "python",
        "pytest": "from solution import add\n\ndef test_small():\n    assert add(1, 2) == 3\n\n"
        "def test_negative():\n    assert add(-4, 5) == 1\n",
    },
    "humaneval": {
        "language": "python",
        "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(0, 7) == 7\n",
        "entry_point": "add",
    },
}
STDIO_SOLUTION = "a, b = map(int, input().split())\nprint(a + b)\nprint(a * b)\n"
ATTACKS = ["workspace_report_rewrite", "workspace_edit_tests", "workspace_reward_file", "workspace_answer_keys",
           "workspace_patch_runtime"]  # fmt: skip

pytestmark = pytest.mark.skipif(
    LocalSandbox().tier not in ("bwrap", "bwrap-exec"), reason="no bubblewrap tier here (apt-get install bubblewrap)"
)


def _rows() -> list[dict]:
    return [
        {"prompt": f"Write the program ({form}).", "tests": json.dumps(tests),
         "canonical_solution": STDIO_SOLUTION if form == "stdio" else ADD}
        for form, tests in FORMS.items()
    ]  # fmt: skip


def _host_places() -> list[Path]:
    return [Path("/tmp"), Path.cwd(), Path.home(), *(Path(p) for p in site.getsitepackages()),
            Path(site.getusersitepackages())]  # fmt: skip


def _planted_on_host(since: float) -> list[str]:
    names = {"conftest.py", "sitecustomize.py", "usercustomize.py", "reward.json", "reward.txt", "junit.xml"}
    found = []
    for place in _host_places():
        if not place.is_dir():
            continue
        for path in place.iterdir():
            try:
                fresh = path.stat().st_mtime >= since
            except OSError:
                continue
            if MARKER in path.name or (fresh and path.name in names):
                found.append(str(path))
    return found


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    base = tmp_path_factory.mktemp("workspace")
    data = base / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    started = time.time() - 1
    outcome = run_reward_audit(CODE_SPEC, data, base / "out", attacks="workspace")
    records = [json.loads(line) for line in (base / "out" / VERDICTS_FILE).read_text().splitlines()]
    return outcome, records, started


def test_the_family_is_every_workspace_attack_and_runs_for_code():
    assert [a.name for a in select_attacks("workspace", ["code"])] == sorted(ATTACKS)
    assert {a.name for a in select_attacks("all", ["code"])} >= set(ATTACKS)
    assert not {a.name for a in select_attacks("all", ["math"])} & set(ATTACKS)


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("attack", ATTACKS)
def test_no_workspace_attack_is_paid(audit, attack, form):
    _, records, _ = audit
    row = list(FORMS).index(form)
    mine = [r for r in records if r["attack"] == attack and r["row"] == row]
    assert mine, f"{attack} made no program for the {form} form"
    assert [r["score"] for r in mine] == [0.0] * len(mine), [(r["score"], r["reason"]) for r in mine]


@pytest.mark.parametrize("form", list(FORMS))
def test_honest_control_is_paid_on_each_form(audit, form):
    _, records, _ = audit
    controls = [r for r in records if r["attack"] == "honest_control" and r["row"] == list(FORMS).index(form)]
    assert [r["score"] for r in controls] == [1.0], controls


def test_the_audit_flags_nothing_and_nothing_reached_the_host(audit):
    outcome, _, started = audit
    assert outcome.flagged == [] and not outcome.controls_failing
    assert _planted_on_host(started) == []


def _program(attack: str, form: str) -> str:
    profile = profile_spec(load_raw_spec(CODE_SPEC))
    row = _rows()[list(FORMS).index(form)]
    completion = get_attack(attack).generate(row_context(row, profile))[0]
    found = re.search(r"```python\n(.*)\n```", completion, re.S)
    assert found is not None
    return found.group(1)


#: run after a probe in the sandbox: what it left in the workspace, /tmp and a planted test file
SHOW = (
    "\nimport os as _os, json as _json\n"
    "print(_json.dumps({'cwd': sorted(_os.listdir('.')), 'tmp': sorted(_os.listdir('/tmp')),"
    " 'test_file': open('test_add.py').read(), 'answer': add(1, 2) if 'add' in globals() else None}))\n"
)
#: what the workspace held before the probe ran: a test file and an answer key in a harness-like spec
WORKSPACE = {
    "test_add.py": "from solution import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "spec.json": json.dumps({"calls": [{"args": [1, 2], "expected": 3}]}),
}
#: what each probe must have done to the workspace above
ACTED = {
    "workspace_report_rewrite": lambda s: (
        {"conftest.py", "sitecustomize.py", f"{MARKER}.pth"} <= set(s["cwd"]) and "conftest.py" in s["tmp"]
    ),
    "workspace_edit_tests": lambda s: s["test_file"].startswith("def test_ok():"),
    "workspace_reward_file": lambda s: {"reward.json", "reward.txt", "junit.xml"} <= set(s["cwd"]) & set(s["tmp"]),
    "workspace_answer_keys": lambda s: s["answer"] == 3,
}


@pytest.mark.parametrize("attack", sorted(ACTED))
def test_each_probe_acts_on_a_workspace_it_can_reach(attack):
    """Run alone in the sandbox over a workspace holding tests and an answer key, each probe does its deed: the
    zeros above are the reward's isolation, not probes that never ran. The answer-key probe finds the key here and
    returns it, so it would be paid by any harness that leaves expected values in the solution's workspace."""
    program = _program(attack, "calls") + SHOW
    result = LocalSandbox().run(RunRequest(argv=["python3", "main.py"], files={"main.py": program, **WORKSPACE}))
    stdout = result.stdout.decode() if isinstance(result.stdout, bytes) else result.stdout
    state = json.loads(stdout.strip().splitlines()[-1])
    assert ACTED[attack](state), state


def test_the_runtime_patch_takes_hold_in_its_own_process():
    """After the patch, ``sys.exit(1)`` exits 0 and ``AssertionError`` names another class: a check that shared the
    solution's process and trusted its exit status or its own ``except AssertionError`` would read a pass."""
    program = _program("workspace_patch_runtime", "stdio")
    assert program.rstrip().endswith("sys.exit(1)")
    probe = program + '\nimport builtins as _b\nprint(_b.AssertionError.__module__ != "builtins")\n'
    result = LocalSandbox().run(RunRequest(argv=["python3", "main.py"], files={"main.py": program}))
    assert result.exit_code == 0, result
    shown = LocalSandbox().run(
        RunRequest(argv=["python3", "main.py"], files={"main.py": probe.replace("sys.exit(1)", "")})
    )
    assert shown.stdout.split()[-1] == b"True", shown
