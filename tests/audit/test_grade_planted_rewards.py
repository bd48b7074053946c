"""``rewardsmith grade`` fails closed against reward files the policy planted in the verifier folder.

An agent that can write ``/logs/verifier`` may leave ``reward.json``/``reward.txt`` saying 1.0, or plant folders so
that writing or removing fails. Whatever happens after (a scored sample, an unscorable one, a usage error, a crash
while scoring, a verdict that cannot be written), the folder never holds a number that this run did not write:
Harbor reads ``reward.json``, else ``reward.txt``. Before the fix, a folder planted as ``reason.json`` made grade exit
2 with the policy's ``{"reward": 1.0}`` still in place, and a folder planted as ``reward.json`` left its
``reward.txt``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.cli.main import main
from rewardsmith.hackaudit.attacks import get_attack
from rewardsmith.hackaudit.controls import row_context
from rewardsmith.hackaudit.runner import load_raw_spec
from rewardsmith.hackaudit.spec_kinds import profile_spec
from rewardsmith.sandboxes.local.backend import LocalSandbox

MATH_SPEC = "rewards:\n  - {name: math_equivalence, weight: 1.0}\n"
FORGED = '{"reward": 1.0}'


def _plant(out: Path, *, json_dir: bool = False, reason_dir: bool = False) -> None:
    out.mkdir(parents=True, exist_ok=True)
    if json_dir:
        (out / "reward.json").mkdir()
        (out / "reward.json" / "x").write_text("1")
    else:
        (out / "reward.json").write_text(FORGED)
    (out / "reward.txt").write_text("1\n")
    if reason_dir:
        (out / "reason.json").mkdir()


def _grade(tmp: Path, out: Path, completion: str, row: dict, spec: str = MATH_SPEC) -> int:
    (tmp / "spec.yaml").write_text(spec)
    (tmp / "answer.txt").write_text(completion)
    args = ["grade", "--spec", str(tmp / "spec.yaml"), "--completion", str(tmp / "answer.txt"), "--out", str(out)]
    return main([*args, "--row", json.dumps(row)])


def _reward(out: Path) -> float | None:
    """What Harbor 0.26 would read: ``reward.json`` if it is there, else ``reward.txt``, else no reward."""
    if (out / "reward.json").is_file():
        return json.loads((out / "reward.json").read_text())["reward"]
    if (out / "reward.txt").exists():
        return float((out / "reward.txt").read_text())
    assert not (out / "reward.json").exists(), "a planted reward.json folder was left"
    return None


#: (planted, completion, row, spec, exit status, reward Harbor reads, why)
TABLE = [
    ({}, "\\boxed{5}", {"solution": "4"}, MATH_SPEC, 0, 0.0, "a wrong answer: grade's 0.0 replaces the forged 1.0"),
    ({}, "\\boxed{4}", {}, MATH_SPEC, 1, None, "unscorable: no number at all, the forged one removed"),
    ({}, "\\boxed{4}", {"solution": "4"}, "rewards: [{name: no_such_reward}]\n", 2, None, "a spec that does not load"),
    ({"reason_dir": True}, "\\boxed{5}", {"solution": "4"}, MATH_SPEC, 2, None, "the reason cannot be written"),
    ({"json_dir": True}, "\\boxed{5}", {"solution": "4"}, MATH_SPEC, 0, 0.0, "a folder planted as reward.json"),
    ({"json_dir": True}, "\\boxed{4}", {}, MATH_SPEC, 1, None, "a folder as reward.json, then unscorable"),
]


@pytest.mark.parametrize(("planted", "completion", "row", "spec", "status", "reward", "why"), TABLE,
                         ids=[t[-1] for t in TABLE])  # fmt: skip
def test_no_planted_reward_survives(tmp_path, planted, completion, row, spec, status, reward, why):
    out = tmp_path / "verifier"
    _plant(out, **planted)
    assert _grade(tmp_path, out, completion, row, spec) == status, why
    assert _reward(out) == reward, why
    assert not (out / "reward.txt").exists(), why


def test_a_symlinked_reward_is_removed_and_its_target_left(tmp_path):
    target = tmp_path / "elsewhere.json"
    target.write_text(FORGED)
    out = tmp_path / "verifier"
    out.mkdir()
    (out / "reward.json").symlink_to(target)
    assert _grade(tmp_path, out, "\\boxed{4}", {}) == 1
    assert _reward(out) is None and target.read_text() == FORGED


def test_a_crash_while_scoring_leaves_no_forged_reward(tmp_path, monkeypatch):
    """An interrupt (or a ``SystemExit`` from a library) while scoring cannot be caused by a completion on demand:
    it is injected. The forged reward is already gone when scoring starts."""
    import rewardsmith.adapters.protocols.verdict as verdict

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(verdict, "score_spec", interrupted)
    out = tmp_path / "verifier"
    _plant(out)
    assert _grade(tmp_path, out, "\\boxed{5}", {"solution": "4"}) != 0
    assert _reward(out) is None


@pytest.mark.skipif(LocalSandbox().tier not in ("bwrap", "bwrap-exec"), reason="no bubblewrap tier here")
def test_a_program_that_writes_reward_files_is_graded_zero(tmp_path):
    """The policy's program itself writes ``reward.json`` in every place it can reach (``/logs/verifier`` among
    them) while ``code_tests`` runs it: it writes in the sandbox, and grade's own 0.0 is what Harbor reads."""
    spec = "rewards:\n  - {name: code_tests, config: {scoring: all_or_nothing, timeout_s: 2.0}}\n"
    tests = {"language": "python", "fn_name": "add", "calls": [{"args": [1, 2], "expected": 3}]}
    row = {"prompt": "Write add(a, b).", "tests": json.dumps(tests)}
    ctx = row_context(row, profile_spec(load_raw_spec({"rewards": [{"name": "code_tests"}]})))
    completion = get_attack("workspace_reward_file").generate(ctx)[0]
    out = tmp_path / "verifier"
    assert _grade(tmp_path, out, completion, {"tests": row["tests"]}, spec) == 0
    assert _reward(out) == 0.0 and sorted(p.name for p in out.iterdir()) == ["reason.json", "reward.json"]
