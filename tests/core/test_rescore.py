"""``rewardsmith rescore``: stored rollouts written by the real writers (``rewardsmith score``, TRL's GRPOTrainer,
verl's rollout dump) re-scored with a spec, diffed per row and per term, resumed, and gated by ``--max-flips``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rewardsmith.cli.main import main
from rewardsmith.rescore import classify, weighted_total
from rewardsmith.rollouts import response_text

#: (completion, gold): the stored verdict comes from a literal regex, the new one from math equivalence
ROWS = [
    (r"so \boxed{4}", "4", 1.0, 1.0),  # same
    (r"so \boxed{2+2}", "4", 0.0, 1.0),  # up: the regex missed an equal answer
    (r"so \boxed{4}", "5", 1.0, 0.0),  # down: the regex paid a wrong answer
    ("no answer here", "4", 0.0, 0.0),  # same
]
REGEX = {"pattern": r"\\boxed\{4\}"}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    """A ``rewardsmith score`` output made by the command itself."""
    data = write_jsonl(tmp_path / "data.jsonl", [{"completion": c, "solution": g} for c, g, _, _ in ROWS])
    out = tmp_path / "scored.jsonl"
    code = main(["score", "--reward", "regex_match", "--config", json.dumps(REGEX), "--data", str(data),
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    assert [json.loads(line)["score"] for line in out.read_text().splitlines()] == [s for _, _, s, _ in ROWS]
    return out


@pytest.fixture
def math_spec(tmp_path: Path) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text("rewards:\n  - name: math_equivalence\n")
    return spec


def test_verdict_moves_are_classified():
    assert [classify(1.0, 0.0), classify(0.0, 1.0), classify(1.0, None), classify(None, 0.0)] == list(
        ("down", "up", "now_unscorable", "now_scorable")
    )
    assert classify(0.5, 0.5 + 1e-12) == "same" and classify(None, None) == "unscorable_both"
    assert weighted_total({"a": 1.0, "b": None}, {"a": 0.5, "b": 2.0}) == 0.5
    assert weighted_total({"a": None}, {"a": 1.0}) is None


def test_a_score_output_rescored_reports_each_flip_with_both_reasons(stored, math_spec, tmp_path, capsys):
    out = tmp_path / "rescore"
    code = main(["rescore", "--spec", str(math_spec), "--data", str(stored), "--out", str(out)])
    assert code == 0  # no --max-flips: the diff informs, it does not gate
    flips = [json.loads(line) for line in (out / "flips.jsonl").read_text().splitlines()]
    assert [(f["row_index"], f["kind"]) for f in flips] == [(1, "up"), (2, "down")]
    assert all(f["stored_reason"] and f["new_reason"] for f in flips)
    assert "2 flipped (1 down, 1 up, 0 now_unscorable, 0 now_scorable)" in capsys.readouterr().out
    report = (out / "report.html").read_text()
    assert "\\boxed{2+2}" in report and "<script" not in report
    assert "| overall | 1 | 1 | 0 | 0 | 2 | 0 |" in (out / "summary.md").read_text()
    # the gate: more flips than allowed is exit 1, with one line saying so
    assert (
        main(["rescore", "--spec", str(math_spec), "--data", str(stored), "--out", str(out), "--max-flips", "1"]) == 1
    )
    assert "2 verdicts moved, more than --max-flips 1" in capsys.readouterr().err
    assert (
        main(["rescore", "--spec", str(math_spec), "--data", str(stored), "--out", str(out), "--max-flips", "2"]) == 0
    )


def test_rescore_resumes_and_refuses_to_mix_two_specs(stored, math_spec, tmp_path, capsys):
    out = tmp_path / "rescore"
    args = ["rescore", "--spec", str(math_spec), "--data", str(stored), "--out", str(out), "--batch-size", "1"]
    assert main(args) == 0
    log = out / "rescored.jsonl"
    first = log.read_text().splitlines()
    log.write_text("\n".join(first[:2]) + "\n")  # a run killed after two rows
    capsys.readouterr()
    assert main(args) == 0
    assert "resuming: 2 of 4 selected rows already rescored" in capsys.readouterr().out
    assert sorted(json.loads(line)["row_index"] for line in log.read_text().splitlines()) == [0, 1, 2, 3]
    other = tmp_path / "other.yaml"
    other.write_text("rewards:\n  - name: think_format\n")
    assert main(["rescore", "--spec", str(other), "--data", str(stored), "--out", str(out)]) == 2
    assert "rescored with another spec" in capsys.readouterr().err


def test_only_unscorable_rows_and_a_missing_gold_column_names_the_fix(tmp_path, math_spec, capsys):
    rows = [
        {"completion": r"\boxed{4}", "answer": "4", "score": None, "reason": "judge call failed", "row_index": 0,
         "scorer": "x"},
        {"completion": r"\boxed{3}", "answer": "4", "score": 0.0, "reason": "wrong", "row_index": 1, "scorer": "x"},
    ]  # fmt: skip
    data = write_jsonl(tmp_path / "stored.jsonl", rows)
    out = tmp_path / "r"
    assert main(["rescore", "--spec", str(math_spec), "--data", str(data), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "['solution']" in err[0] and "--rename STORED=solution" in err[0]
    code = main(["rescore", "--spec", str(math_spec), "--data", str(data), "--out", str(out), "--only", "unscorable",
                 "--rename", "answer=solution"])  # fmt: skip
    assert code == 0
    verdicts = [json.loads(line) for line in (out / "rescored.jsonl").read_text().splitlines()]
    assert [(v["row_index"], v["new_score"]) for v in verdicts] == [(0, 1.0)]
    assert "1 now_scorable" in capsys.readouterr().out


VERL_TRAINER = (
    Path(os.environ.get("REWARDSMITH_VERL_VENV", "/opt/rewardsmith-verl"))
    / "lib/python3.11/site-packages/verl/trainer/ppo/ray_trainer.py"
)


def verl_write_generations():
    """verl 0.9.1's own rollout writer (``RayPPOTrainer._write_generations``), compiled from its installed source
    alone: importing the trainer module needs vLLM's and Ray's stack, the writer needs only ``json`` and ``os``."""
    import ast

    tree = ast.parse(VERL_TRAINER.read_text())
    trainer = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RayPPOTrainer")
    writer = next(n for n in trainer.body if isinstance(n, ast.FunctionDef) and n.name == "_write_generations")
    writer.decorator_list = []
    namespace: dict = {"json": json, "os": os}
    exec(compile(ast.Module(body=[writer], type_ignores=[]), str(VERL_TRAINER), "exec"), namespace)
    return namespace["_write_generations"]


@pytest.mark.skipif(not VERL_TRAINER.exists(), reason="verl's side environment (.ci/run builds it)")
def test_a_verl_rollout_dump_written_by_verl_is_rescored_with_its_ground_truth(tmp_path, math_spec, capsys):
    dump = tmp_path / "rollouts"
    scores = [s for _, _, s, _ in ROWS]
    verl_write_generations()(
        ["2+2?"] * len(ROWS), [c for c, _, _, _ in ROWS], [g for _, g, _, _ in ROWS], scores, {"acc": scores},
        str(dump), 7,
    )  # fmt: skip
    assert (dump / "7.jsonl").exists()
    out = tmp_path / "r"
    assert main(["rescore", "--spec", str(math_spec), "--data", str(dump), "--out", str(out), "--max-flips", "0"]) == 1
    flips = [json.loads(line) for line in (out / "flips.jsonl").read_text().splitlines()]
    assert [(f["row_index"], f["kind"]) for f in flips] == [(1, "up"), (2, "down")]


def test_nemo_gym_rollouts_read_the_responses_output_text(tmp_path, math_spec):
    def line(text: str, gold: str, reward: float) -> dict:
        return {
            "responses_create_params": {"input": [{"role": "user", "content": "2+2?"}]},
            "response": {
                "id": "resp_1",
                "object": "response",
                "output": [
                    {"type": "reasoning", "id": "rs_1", "summary": []},
                    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
                     "content": [{"type": "output_text", "text": text, "annotations": []}]},
                ],
            },
            "reward": reward,
            "expected_answer": gold,
        }  # fmt: skip

    assert response_text(line("a", "4", 0)["response"]) == "a"
    data = write_jsonl(tmp_path / "rollouts.jsonl", [line(c, g, s) for c, g, s, _ in ROWS])
    out = tmp_path / "r"
    code = main(["rescore", "--spec", str(math_spec), "--data", str(data), "--out", str(out),
                 "--rename", "expected_answer=solution"])  # fmt: skip
    assert code == 0
    verdicts = [json.loads(line) for line in (out / "rescored.jsonl").read_text().splitlines()]
    assert [v["new_score"] for v in verdicts] == [n for _, _, _, n in ROWS]


@pytest.mark.slow
def test_trl_logged_completions_rescored_with_the_same_spec_do_not_move(tiny_model_dir, tmp_path):
    """TRL's own completions table (one column per reward function, no total): the same spec gives the same
    verdicts, a changed term moves only that term."""
    from datasets import Dataset
    from trl import GRPOTrainer

    from rewardsmith import get_reward
    from tests.support.trl_helpers import tiny_grpo_config

    digit = {"pattern": "[0-9]"}
    args = tiny_grpo_config(tmp_path / "run", seed=0, disable_tqdm=True, max_steps=1, log_completions=True)
    trainer = GRPOTrainer(
        model=str(tiny_model_dir),
        reward_funcs=[get_reward("think_format"), get_reward("regex_match", digit)],
        args=args,
        train_dataset=Dataset.from_dict({"prompt": ["What is 2 + 2?"] * 4}),
    )
    trainer.train()
    tables = sorted((tmp_path / "run" / "completions").glob("*.parquet"))
    assert tables, "TRL wrote no completions table"
    same = tmp_path / "same.yaml"
    same.write_text(f"rewards:\n  - think_format\n  - name: regex_match\n    config: {json.dumps(digit)}\n")
    out = tmp_path / "r"
    assert main(["rescore", "--spec", str(same), "--data", str(tables[0].parent), "--out", str(out),
                 "--max-flips", "0"]) == 0  # fmt: skip
    verdicts = [json.loads(line) for line in (out / "rescored.jsonl").read_text().splitlines()]
    assert len(verdicts) == 4 and all(v["stored_terms"].keys() == {"think_format", "regex_match"} for v in verdicts)
    stored = [v["stored_terms"]["regex_match"] for v in verdicts]
    # a term that now never pays moves exactly the rows it paid; one that always pays, exactly the others
    for pattern, moved_from, kind in (("(?!)", 1.0, "down"), ("[\\s\\S]", 0.0, "up")):
        changed = tmp_path / f"changed_{kind}.yaml"
        changed.write_text(
            f"rewards:\n  - think_format\n  - name: regex_match\n    config: {json.dumps({'pattern': pattern})}\n"
        )
        main(["rescore", "--spec", str(changed), "--data", str(tables[0].parent), "--out", str(tmp_path / kind)])
        moved = [json.loads(line) for line in (tmp_path / kind / "flips.jsonl").read_text().splitlines()]
        assert sorted(f["row_index"] for f in moved) == [i for i, s in enumerate(stored) if s == moved_from]
        assert all(f["terms"] == {"regex_match": {"kind": kind, "stored": moved_from, "new": 1.0 - moved_from}}
                   for f in moved)  # fmt: skip
