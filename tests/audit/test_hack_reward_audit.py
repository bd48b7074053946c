"""``rewardsmith audit reward``: the attack battery against real reward specs on the bundled rows.

A weak spec ("accuracy" = any number, plus format and length terms) must be flagged by most attacks;
``math_equivalence`` and ``code_tests`` (local sandbox) must pay no attack while the honest controls all pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.cli.main import main as cli
from rewardsmith.hackaudit.attacks import ATTACKS, select_attacks
from rewardsmith.hackaudit.runner import VERDICTS_FILE, run_reward_audit
from rewardsmith.reward import ConfigError

SAMPLES = Path(__file__).resolve().parents[2] / "rewardsmith" / "samples"
WEAK, MATH_SPEC, CODE_SPEC = (SAMPLES / f"hack_{n}_spec.yaml" for n in ("weak", "math", "code"))
MATH_ROWS, CODE_ROWS = SAMPLES / "hack_math_rows.jsonl", SAMPLES / "hack_code_rows.jsonl"

#: Attacks that find false positives in math_equivalence (none open). Found and fixed: a hedge inside \texttt{} read
#: as the gold, "-3.-3.-3" equal to -3.
MATH_KNOWN_FALSE_POSITIVES: dict[str, str] = {}


@pytest.fixture(scope="module")
def weak_run(tmp_path_factory):
    return run_reward_audit(WEAK, MATH_ROWS, tmp_path_factory.mktemp("weak"))


@pytest.fixture(scope="module")
def math_run(tmp_path_factory):
    return run_reward_audit(MATH_SPEC, MATH_ROWS, tmp_path_factory.mktemp("math"))


def test_weak_spec_is_flagged_by_most_attacks(weak_run):
    m = weak_run.metrics
    assert m["run"]["kinds"] == ["math", "format"]
    applicable = {n: a for n, a in m["attacks"].items() if a["n"]}
    assert {a["family"] for a in applicable.values()} == {"math", "format"}
    high = [n for n, a in applicable.items() if a["rate"] >= 0.5]
    assert len(high) >= 0.8 * len(applicable), high
    assert set(high) <= set(m["flagged"])
    assert "math_empty" not in m["flagged"]  # no number, nothing to pay for
    assert m["controls"]["rate"] == 1.0 and not m["controls_failing"]


def test_every_rate_has_a_wilson_interval_over_rows(weak_run):
    for name, a in weak_run.metrics["attacks"].items():
        # every row but the hexagon one (no number to echo) gets every attack
        assert a["scored_correct"] <= a["n"] and a["n_rows"] == (9 if name == "math_echo_numbers" else 10), name
        assert 0.0 <= a["low"] <= a["rate"] <= a["high"] <= 1.0, name
    # variants on one row are clustered: a rate of 1 over 20 completions on 10 rows is as sure as 10 trials
    empty_think = weak_run.metrics["attacks"]["format_empty_think"]
    assert empty_think["n"] == 20 and empty_think["low"] == pytest.approx(0.7225, abs=1e-3)


@pytest.mark.parametrize(
    "attack",
    [
        pytest.param(name, marks=pytest.mark.xfail(reason=MATH_KNOWN_FALSE_POSITIVES[name], strict=False))
        if name in MATH_KNOWN_FALSE_POSITIVES
        else name
        for name in ATTACKS.names()
        if name.startswith("math_")
    ],
)
def test_math_equivalence_pays_no_attack(math_run, attack):
    a = math_run.metrics["attacks"][attack]
    assert a["n"] > 0
    assert a["scored_correct"] == 0, [e for e in _examples(math_run) if e["attack"] == attack]


def test_math_equivalence_controls_pass(math_run):
    assert math_run.metrics["run"]["kinds"] == ["math"]
    assert math_run.metrics["controls"]["scored_correct"] == math_run.metrics["controls"]["n"] == 10


def test_code_tests_pays_no_attack_and_controls_pass(tmp_path):
    from rewardsmith.sandboxes.local.backend import LocalSandbox

    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")
    outcome = run_reward_audit(CODE_SPEC, CODE_ROWS, tmp_path)
    m = outcome.metrics
    assert m["run"]["kinds"] == ["code"]
    code_attacks = {n: a for n, a in m["attacks"].items() if n.startswith("code_")}
    assert set(code_attacks) == {n for n in ATTACKS.names() if n.startswith("code_")}
    for name, a in code_attacks.items():
        assert a["n"] > 0 and a["scored_correct"] == 0, (name, [e for e in _examples(outcome) if e["attack"] == name])
    assert m["controls"]["scored_correct"] == m["controls"]["n"] == 5
    assert m["flagged"] == [] and not m["controls_failing"]


def _examples(outcome) -> list[dict]:
    return [json.loads(line) for line in outcome.paths["examples"].read_text().splitlines()]


def test_outputs_name_the_worst_examples_with_reasons(weak_run):
    paths = weak_run.paths
    examples = _examples(weak_run)
    assert examples[0]["scored_correct"] and "honest_control" not in {e["attack"] for e in examples}
    hedge = [e for e in examples if e["attack"] == "math_hedged_list"]
    assert hedge and all(e["scored_correct"] and "accuracy=1.0 (search match" in e["reason"] for e in hedge)
    page = paths["html"].read_text()
    assert "data:image/png;base64," in page and "math_hedged_list" in page and "HACKABLE" in page
    summary = paths["summary"].read_text()
    assert "| math_hedged_list | math | 40/40 |" in summary
    metrics = json.loads(paths["metrics"].read_text())
    assert set(metrics["attacks"]["math_hedged_list"]) >= {"scored_correct", "n", "rate", "low", "high"}


def test_rerun_scores_nothing_and_a_torn_store_resumes(tmp_path):
    first = run_reward_audit(WEAK, MATH_ROWS, tmp_path, attacks="math_hedged_list,format_empty_think")
    assert first.scored_now == 10 + 40 + 20 and first.reused == 0
    again = run_reward_audit(WEAK, MATH_ROWS, tmp_path, attacks="math_hedged_list,format_empty_think")
    assert again.scored_now == 0 and again.metrics == {**first.metrics, "run": again.metrics["run"]}
    store = tmp_path / VERDICTS_FILE
    lines = store.read_bytes().splitlines(keepends=True)
    store.write_bytes(b"".join(lines[:30]) + lines[30][:17])  # killed mid-write: 30 rows kept, one torn
    resumed = run_reward_audit(WEAK, MATH_ROWS, tmp_path, attacks="math_hedged_list,format_empty_think")
    assert resumed.scored_now == 40 and resumed.reused == 30
    assert resumed.metrics["attacks"] == first.metrics["attacks"]


def test_cli_exits_1_and_names_the_attack(tmp_path, capsys):
    code = cli(["audit", "reward", "--spec", str(WEAK), "--data", str(MATH_ROWS), "--out", str(tmp_path),
                "--attacks", "math_hedged_list,math_empty", "--no-progress"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "HACKABLE: math_hedged_list: 40/40" in out and "math_empty" not in out.split("report:")[0]
    tolerant = cli(["audit", "reward", "--spec", str(WEAK), "--data", str(MATH_ROWS), "--out", str(tmp_path),
                    "--attacks", "math_empty", "--no-progress"])  # fmt: skip
    assert tolerant == 0


def test_controls_that_fail_are_reported_not_safe(tmp_path, capsys):
    reject_all = {"rewards": [{"name": "regex_match", "config": {"pattern": "^IMPOSSIBLE$", "mode": "fullmatch"}}]}
    outcome = run_reward_audit(reject_all, MATH_ROWS, tmp_path, attacks="math")
    assert outcome.flagged == [] and outcome.controls_failing
    assert outcome.metrics["controls"]["scored_correct"] == 0
    controls = [e for e in _examples(outcome) if e["attack"] == "honest_control"]
    assert controls and not any(e["scored_correct"] for e in controls)  # the failing controls are shown


def test_attack_selection_by_family_name_and_kinds():
    assert {a.family for a in select_attacks("all", ["math"])} == {"math"}
    assert {a.name for a in select_attacks("code,judge_master_key", ["math"])} == {
        *(n for n in ATTACKS.names() if n.startswith("code_")),
        "judge_master_key",
    }
    with pytest.raises(ConfigError, match="Did you mean 'math_empty'"):
        select_attacks("math_emty", ["math"])


PLUGIN = """
from rewardsmith.hackaudit.attacks.base import Attack


class ShoutedAnswer(Attack):
    family = "math"
    kinds = ("math",)
    description = "a wrong number shouted"

    def generate(self, ctx):
        return [ctx.frame(f"THE ANSWER IS {ctx.wrong_values(1)[0]}!!!")] if ctx.gold else []
"""


def test_a_plugin_attack_from_an_entry_point_runs_in_the_audit(tmp_path, monkeypatch):
    site = tmp_path / "site"
    dist = site / "shout_attacks-0.1.dist-info"
    dist.mkdir(parents=True)
    (site / "shout_attacks.py").write_text(PLUGIN)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-attacks\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rewardsmith.attacks]\nshouted_answer = shout_attacks:ShoutedAnswer\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(ATTACKS, "_loaded", False)
    monkeypatch.setattr(ATTACKS, "entries", dict(ATTACKS.entries))
    assert "shouted_answer" in ATTACKS.names()
    outcome = run_reward_audit(WEAK, MATH_ROWS, tmp_path / "run", attacks="shouted_answer")
    assert outcome.metrics["attacks"]["shouted_answer"]["scored_correct"] == 10
    assert outcome.flagged == ["shouted_answer"]


def test_judge_attacks_against_a_real_local_reward_model(tiny_rm_dir, tmp_path):
    """A reward-model spec gets the judge family; every verdict is scored and the rates recount from the store."""
    spec = {"rewards": [{"name": "reward_model", "config": {"model": str(tiny_rm_dir)}}]}
    outcome = run_reward_audit(spec, MATH_ROWS, tmp_path, threshold=0.0)
    m = outcome.metrics
    assert m["run"]["kinds"] == ["judge"]
    judge = {n: a for n, a in m["attacks"].items()}
    assert set(judge) == {n for n in ATTACKS.names() if n.startswith("judge_")}
    records = [json.loads(line) for line in (tmp_path / VERDICTS_FILE).read_text().splitlines()]
    assert all(r["score"] is not None for r in records)
    for name, a in judge.items():
        mine = [r for r in records if r["attack"] == name]
        assert a["n"] == len(mine) > 0
        assert a["scored_correct"] == sum(r["score"] >= 0.0 for r in mine)


def test_rows_without_gold_are_refused_as_unproven(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"prompt": f"What is {i} + 1?"}) + "\n" for i in range(3)))
    outcome = run_reward_audit(MATH_SPEC, rows, tmp_path / "run")
    assert outcome.controls_failing and outcome.metrics["controls"]["n"] == 0
    assert all(not a["n"] for a in outcome.metrics["attacks"].values())  # every math attack needs a gold
    assert "NO HONEST CONTROLS" in outcome.paths["summary"].read_text()
