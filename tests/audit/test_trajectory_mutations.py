"""Multi-turn audit: honest tool-using transcripts mutated, scored by real rewards through ``step_rewards``.

The table states, per reward and face, how many of ten mutants are paid at least as much as their honest
transcript. A corrupted final answer is never paid by a spec with an outcome term. The rest is what the audit is
for, reported as measured: ``tool_call_validity`` scores a turn without calls 1.0 (``no_call_score``), so stripping
every call costs nothing and repeating the final turn adds 0.5 a turn to a summed return; a mean over turns pays a
transcript with its work dropped more than the honest one (fewer turns, each valid); an outcome-only face (the last
turn, the per-sample value, ``math_equivalence`` alone) cannot see the work at all.
"""

from __future__ import annotations

import json

import pytest

from rewardsmith import get_reward
from rewardsmith.cli.main import main as cli
from rewardsmith.hackaudit.trajectories import (
    MUTATIONS,
    audit_trajectories,
    corrupt_final_answer,
    drop_work_turns,
    fabricated_tool_result,
    strip_tool_calls,
    transcript_column,
)
from rewardsmith.transcripts import assistant_turns

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
        },
    }
]


def _call(call_id: str, args: dict) -> dict:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "add", "arguments": json.dumps(args)}}],
    }


def _row(a: int, b: int) -> dict:
    messages = [{"role": "user", "content": f"What is {a} + {b}? Use the tool."}, _call("c1", {"a": a, "b": b})]
    messages += [{"role": "tool", "tool_call_id": "c1", "content": str(a + b)}]
    messages += [{"role": "assistant", "content": f"The tool says {a + b}, so the answer is \\boxed{{{a + b}}}."}]
    return {"prompt": messages[0]["content"], "messages": messages, "solution": str(a + b), "tools": TOOLS}


ROWS = [_row(a, 2 * a + 1) for a in range(1, 11)]
WEIGHTED = {"rewards": [{"name": "tool_call_validity", "weight": 0.5}, {"name": "math_equivalence", "weight": 1.0}]}
NAMES = [m.name for m in MUTATIONS]

#: (reward, face) -> mutants of 10 paid at least as much as the honest transcript, in MUTATIONS order:
#: drop_work_turns, strip_tool_calls, corrupt_final_answer, duplicate_final_answer, fabricated_tool_result
TABLE = {
    ("weighted", "sum"): (0, 10, 0, 10, 0),
    ("weighted", "mean"): (10, 10, 0, 0, 10),
    ("weighted", "last"): (10, 10, 0, 10, 10),
    ("weighted", "sample"): (10, 10, 0, 10, 10),
    ("math_equivalence", "sum"): (10, 10, 0, 10, 10),
    ("math_equivalence", "sample"): (10, 10, 0, 10, 10),
    ("tool_call_validity", "mean"): (10, 10, 10, 10, 10),
}


def _reward(name: str):
    return get_reward("weighted_sum", WEIGHTED) if name == "weighted" else get_reward(name)


@pytest.mark.parametrize(("reward", "face"), list(TABLE), ids=[f"{r}-{f}" for r, f in TABLE])
def test_verdict_table(reward, face):
    report = audit_trajectories(_reward(reward), ROWS, face=face)
    assert report["honest"]["paid"] == 10 and report["honest"]["unscorable"] == 0
    paid = tuple(report["mutations"][name]["paid_at_least_honest"] for name in NAMES)
    assert paid == TABLE[(reward, face)], {n: report["mutations"][n] for n in NAMES}
    for name in NAMES:
        m = report["mutations"][name]
        assert m["n"] == 10 and m["not_applicable"] == 0
        assert 0.0 <= m["low"] <= m["rate"] <= m["high"] <= 1.0
    assert report["flagged"] == [n for n, count in zip(NAMES, paid, strict=True) if count]


def test_a_corrupted_final_answer_is_never_paid_by_an_outcome_term():
    for face in ("sum", "mean", "last", "sample"):
        m = audit_trajectories(_reward("weighted"), ROWS, face=face)["mutations"]["corrupt_final_answer"]
        assert m["paid_at_least_honest"] == 0 and m["high"] < 0.3, (face, m)


def test_the_mutations_do_what_they_say():
    honest, gold = ROWS[0]["messages"], ROWS[0]["solution"]
    dropped = drop_work_turns(honest, gold)
    assert dropped is not None and [m["role"] for m in dropped] == ["user", "assistant"]
    stripped = strip_tool_calls(honest, gold)
    assert stripped is not None and all(not t.tool_calls for t in assistant_turns(stripped))
    assert len(assistant_turns(stripped)) == len(assistant_turns(honest))
    corrupted = corrupt_final_answer(honest, gold)
    assert corrupted is not None and corrupted[-1]["content"].endswith("\\boxed{5}.") and gold == "4"
    forged = fabricated_tool_result(honest, gold)
    assert forged is not None and forged[-2]["role"] == "tool" and forged[-2]["content"] == gold
    assert honest == ROWS[0]["messages"]  # the honest transcript is left as it was
    assert drop_work_turns([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "4"}], "4") is None


def test_rows_without_a_transcript_are_refused():
    assert transcript_column({"prompt": "x", "completion": "plain text"}) is None
    with pytest.raises(ValueError, match="no row carries a transcript"):
        audit_trajectories(get_reward("math_equivalence"), [{"prompt": "x", "solution": "4"}])


def test_audit_reward_runs_the_mutations_on_rows_with_transcripts(tmp_path, capsys):
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(WEIGHTED))
    out = tmp_path / "out"
    cli(["audit", "reward", "--spec", str(spec), "--data", str(data), "--out", str(out), "--no-progress"])
    printed = capsys.readouterr().out
    assert "trajectory mutation corrupt_final_answer: paid at least as much as the honest transcript 0/10" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["trajectories"]["mutations"]["strip_tool_calls"]["paid_at_least_honest"] == 10
    assert "| duplicate_final_answer | 10/10 |" in (out / "trajectories.md").read_text()
