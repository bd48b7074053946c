"""End to end with the real embedded judge (SmolLM2-135M-Instruct, llama.cpp server or transformers):
the zero-argument demo writes a valid DPO dataset with provenance, TRL's DPOTrainer trains on it,
and the critique -> revision pipeline writes SFT and DPO data."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from rewardsmith.constitutions.loader import constitution_hash, load_constitution
from tests.support.trl_helpers import tiny_dpo_config


def _require_embedded_model() -> None:
    from rewardsmith.judges.clients.embedded import packaged_model_path

    try:
        packaged_model_path()
    except FileNotFoundError as exc:
        print(f"skipping embedded-judge RLAIF tests: {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """``rewardsmith rlaif pairs --demo --out DIR``, exactly the README's first command, in a subprocess."""
    _require_embedded_model()
    out = tmp_path_factory.mktemp("rlaif-demo")
    completed = subprocess.run(
        [sys.executable, "-m", "rewardsmith", "rlaif", "pairs", "--demo", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "scores each response by its likelihood" in completed.stderr  # what these labels are worth
    assert completed.stderr.count("plumbing default") == 1 and "at chance" in completed.stderr
    return out, completed.stdout


@pytest.mark.slow
def test_demo_writes_a_valid_dpo_dataset_with_provenance(demo_run):
    from datasets import load_dataset

    out, stdout = demo_run
    assert "pairs: 20 compared" in stdout
    assert str(out / "train.jsonl") in stdout and "position flips:" in stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pairs_total"] == 20 and summary["failed"] == 0
    assert summary["kept"] + sum(summary["dropped"].values()) == 20
    assert summary["kept"] > 0
    # The embedded default judges by response likelihood: no position to follow, and it picks the marked-better
    # response 16/18 times (the letter judge: 12/18 with every pair flipped).
    assert "position flips: not measurable" in stdout and "0/20" not in stdout  # it cannot flip: no rate to boast
    assert summary["reference_pairs"] == 18 and summary["reference_agreed"] >= 15

    from_json = load_dataset("json", data_files=str(out / "train.jsonl"), split="train")
    from_parquet = load_dataset("parquet", data_files=str(out / "train.parquet"), split="train")
    assert from_json.num_rows == from_parquet.num_rows == summary["kept"]
    for json_row, parquet_row in zip(from_json, from_parquet, strict=True):
        assert json_row["prob_chosen"] == pytest.approx(parquet_row["prob_chosen"], abs=1e-12)
        assert {k: v for k, v in json_row.items() if not k.startswith("prob")} == {
            k: v for k, v in parquet_row.items() if not k.startswith("prob")
        }
    for column in (
        "prompt",
        "chosen",
        "rejected",
        "principles",
        "prob_chosen",
        "prob_chosen_shown_first",
        "prob_chosen_shown_second",
        "flip",
        "judge_model",
        "constitution",
        "constitution_hash",
    ):
        assert column in from_json.column_names

    principle_ids = {p.id for p in load_constitution("helpful-harmless").principles}
    digest = constitution_hash(load_constitution("helpful-harmless"))
    for row in from_json:
        assert isinstance(row["prompt"], str) and row["prompt"]
        assert row["chosen"] != row["rejected"]
        assert row["prob_chosen"] > 0.5
        assert len(row["principles"]) == 1 and set(row["principles"]) <= principle_ids
        assert all(0.0 <= p <= 1.0 for p in row["prob_chosen_shown_first"] + row["prob_chosen_shown_second"])
        # the averaged preference is the mean of the two presentation orders
        assert row["prob_chosen"] == pytest.approx(
            (row["prob_chosen_shown_first"][0] + row["prob_chosen_shown_second"][0]) / 2
        )
        assert row["judge_model"].startswith("smollm2-135m-instruct")
        assert row["constitution_hash"] == digest

    keys = [row["key"] for row in from_json]
    assert len(keys) == len(set(keys))


@pytest.mark.slow
def test_rerunning_the_demo_resumes_without_judge_calls(demo_run):
    out, _ = demo_run
    before = (out / "train.jsonl").read_text()
    completed = subprocess.run(
        [sys.executable, "-m", "rewardsmith", "rlaif", "pairs", "--demo", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "resumed from an earlier run: 20" in completed.stdout
    assert "judge calls: 0" in completed.stdout
    assert (out / "train.jsonl").read_text() == before


@pytest.mark.slow
def test_dpo_trainer_trains_on_the_demo_dataset(demo_run, tiny_model_dir, tmp_path):
    pytest.importorskip("trl")
    from datasets import load_dataset
    from transformers import AutoTokenizer
    from trl import DPOTrainer

    out, _ = demo_run
    dataset = load_dataset("parquet", data_files=str(out / "train.parquet"), split="train")
    dataset = dataset.select_columns(["prompt", "chosen", "rejected"])
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    args = tiny_dpo_config(tmp_path / "dpo", per_device_train_batch_size=2, max_length=128)
    trainer = DPOTrainer(model=str(tiny_model_dir), args=args, train_dataset=dataset, processing_class=tokenizer)
    trainer.train()
    assert trainer.state.global_step == 2
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)


@pytest.mark.slow
def test_critique_revision_writes_sft_and_dpo_data(embedded_server, tmp_path):
    from datasets import load_dataset

    from rewardsmith.cli.main import main

    data = tmp_path / "responses.jsonl"
    rows = [
        {"prompt": "What is the capital of Australia?", "response": "Sydney, I think, but maybe Melbourne."},
        {"prompt": "How do I store passwords?", "response": "Put them in a text file."},
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "revise"
    code = main(
        ["rlaif", "revise", "--data", str(data), "--rounds", "1", "--max-tokens", "64", "--out", str(out),
         "--reviser-base-url", embedded_server.base_url, "--no-progress"]
    )  # fmt: skip
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["responses_total"] == 2 and summary["failed"] == 0
    sft = load_dataset("json", data_files=str(out / "sft.jsonl"), split="train")
    dpo = load_dataset("parquet", data_files=str(out / "dpo.parquet"), split="train")
    assert summary["revised"] >= 1
    assert sft.num_rows == summary["revised"] == dpo.num_rows
    principle_ids = {p.id for p in load_constitution("helpful-harmless").principles}
    for row in dpo:
        assert row["chosen"] != row["rejected"] and row["chosen"].strip()
        assert len(row["principles"]) == len(row["critiques"]) == 1
        assert set(row["principles"]) <= principle_ids
        assert row["critiques"][0].strip()
    assert set(dpo["rejected"]) <= {row["response"] for row in rows}  # the original is always the rejected one


@pytest.mark.slow
def test_pairs_from_candidates_generated_by_a_policy(embedded_server, tiny_model_dir, tmp_path):
    from datasets import load_dataset

    from rewardsmith.cli.main import main

    data = tmp_path / "prompts.jsonl"
    data.write_text(
        json.dumps({"prompt": "What is 3 + 5?"})
        + "\n"
        + json.dumps({"prompt": [{"role": "user", "content": "Say something helpful."}]})
        + "\n"
    )
    out = tmp_path / "generated"
    code = main(
        [
            "rlaif",
            "pairs",
            "--data",
            str(data),
            "--out",
            str(out),
            "--k",
            "2",
            "--temperature",
            "1.0",
            "--max-tokens",
            "12",
            "--policy",
            f"transformers:{tiny_model_dir}",
            "--judge-base-url",
            embedded_server.base_url,
            "--conversational",
            "--format",
            "parquet",
            "--no-progress",
        ]
    )
    assert code == 0
    candidates = [json.loads(line) for line in (out / "state" / "candidates.jsonl").read_text().splitlines()]
    assert [len(set(c["candidates"])) for c in candidates] == [2, 2]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pairs_total"] == 2 and summary["failed"] == 0
    dataset = load_dataset("parquet", data_files=str(out / "train.parquet"), split="train")
    assert dataset.num_rows == summary["kept"]
    for row in dataset:
        assert row["prompt"][-1]["role"] == "user"
        assert row["chosen"][0]["role"] == row["rejected"][0]["role"] == "assistant"
        assert row["chosen"] != row["rejected"]
        generated = {text for c in candidates for text in c["candidates"]}
        assert {row["chosen"][0]["content"], row["rejected"][0]["content"]} <= generated


def test_missing_candidates_without_a_policy_is_a_clear_error(tmp_path, capsys):
    from rewardsmith.cli.main import main

    data = tmp_path / "prompts.jsonl"
    data.write_text(json.dumps({"prompt": "Hi", "responses": ["only one"]}) + "\n")
    assert main(["rlaif", "pairs", "--data", str(data), "--out", str(tmp_path / "o")]) == 2
    assert "give a policy to generate them" in capsys.readouterr().err
    assert main(["rlaif", "pairs", "--out", str(tmp_path / "o")]) == 2
    assert "--demo" in capsys.readouterr().err


@pytest.mark.slow
def test_sigkilled_cli_run_resumes_to_the_uninterrupted_result(demo_run, embedded_server, tmp_path):
    import signal
    import time

    full, _ = demo_run
    out = tmp_path / "killed"
    command = [sys.executable, "-m", "rewardsmith", "rlaif", "pairs", "--demo", "--limit", "2", "--out", str(out),
               "--judge-base-url", embedded_server.base_url, "--concurrency", "1", "--no-progress"]  # fmt: skip
    store = out / "state" / "pairs.jsonl"
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while not (store.exists() and store.read_bytes().count(b"\n") >= 1):
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, "no pair was judged"
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    assert store.read_bytes().count(b"\n") < 4 and not (out / "train.jsonl").exists()

    completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "resumed from an earlier run:" in completed.stdout
    resumed = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    reference = {row["key"]: row for row in map(json.loads, (full / "train.jsonl").read_text().splitlines())}
    stored = [json.loads(line)["key"] for line in store.read_text().splitlines()]
    assert len(stored) == len(set(stored)) == 4  # 3 + 1 pairs, none lost, none twice
    assert len(resumed) == len({row["key"] for row in resumed})
    for row in resumed:
        assert (row["chosen"], row["rejected"]) == (reference[row["key"]]["chosen"], reference[row["key"]]["rejected"])
        assert row["prob_chosen"] == pytest.approx(reference[row["key"]]["prob_chosen"], abs=1e-6)
