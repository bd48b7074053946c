"""Crash safety: a pairs run killed with SIGKILL and rerun with the same command loses no pair and
duplicates none (nor a dropped prompt); its dataset equals that of an uninterrupted run.

The run is a real subprocess (this file's ``__main__``) writing through the real store and export;
its judge is deterministic and slow enough to be killed mid-run, concurrency 4.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

N_PROMPTS = 30
#: Every seventh prompt has no two distinct candidates: dropped as a whole, never judged.
UNPAIRABLE_EVERY = 7
N_UNPAIRABLE = len(range(0, N_PROMPTS, UNPAIRABLE_EVERY))
HERE = Path(__file__).resolve()


class SlowDeterministicJudge:
    """Prefers the response with more vowels; ties on equal counts. 40 ms per comparison."""

    model = "slow-deterministic"

    def judge(self, prompt, response_a, response_b, *, question=None):
        from rewardsmith.judges.base import OrderVerdict
        from rewardsmith.judges.pairwise import combine_orders

        def p_first(first, second):
            score = sum(c in "aeiou" for c in first) - sum(c in "aeiou" for c in second)
            p = 0.5 if score == 0 else (0.8 if score > 0 else 0.2)
            return OrderVerdict(
                prob_first=p, choice=None if p == 0.5 else ("first" if p > 0.5 else "second"), source="logprobs"
            )

        return combine_orders(
            p_first(response_a, response_b), p_first(response_b, response_a), principle=question, model=self.model
        )

    async def ajudge(self, prompt, response_a, response_b, *, question=None):
        await asyncio.sleep(0.04)
        return self.judge(prompt, response_a, response_b, question=question)


def items():
    from rewardsmith.constitutions.prompts import PromptItem

    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    return [
        PromptItem(
            index=i,
            prompt_id=f"p{i}",
            prompt=f"prompt {i}",
            candidates=(words[i % 10], words[i % 10] + " ")
            if i % UNPAIRABLE_EVERY == 0
            else (words[i % 10], words[(i + 3) % 10] + " x", words[(i + 7) % 10] + " yy"),
        )
        for i in range(N_PROMPTS)
    ]


def run_pipeline(out: Path) -> None:
    from rewardsmith.constitutions.loader import load_constitution
    from rewardsmith.constitutions.pairs import PairsConfig, PairsPipeline, check_fingerprint, export_pairs
    from rewardsmith.store import KeyedStore

    pipeline = PairsPipeline(
        SlowDeterministicJudge(),
        load_constitution("helpful-harmless"),
        PairsConfig(concurrency=4, principles_per_comparison=2),
    )
    check_fingerprint(out / "state", pipeline.fingerprint())
    with KeyedStore(out / "state" / "pairs.jsonl") as store:
        summary = pipeline.run(items(), store)
        export_pairs(store, out, ("jsonl", "parquet"))
    print(json.dumps(summary.model_dump()))


def start(out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(HERE), str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONHASHSEED": "random"},
    )


def store_lines(out: Path) -> int:
    path = out / "state" / "pairs.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def kill_after(out: Path, lines: int, timeout: float = 60.0) -> None:
    process = start(out)
    deadline = time.monotonic() + timeout
    while store_lines(out) < lines:
        assert process.poll() is None, process.stderr.read().decode()
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL


def finish(out: Path) -> dict:
    completed = subprocess.run([sys.executable, str(HERE), str(out)], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_sigkill_twice_then_rerun_equals_an_uninterrupted_run(tmp_path):
    pairs = (N_PROMPTS - N_UNPAIRABLE) * 3
    total = pairs + N_UNPAIRABLE
    interrupted = tmp_path / "interrupted"
    kill_after(interrupted, 10)
    first_kill = store_lines(interrupted)
    assert first_kill < total and not (interrupted / "train.jsonl").exists()
    kill_after(interrupted, first_kill + 15)
    assert store_lines(interrupted) < total
    summary = finish(interrupted)
    assert summary["resumed"] >= first_kill + 15 and summary["failed"] == 0

    clean = tmp_path / "clean"
    clean_summary = finish(clean)
    assert clean_summary["resumed"] == 0

    for name in ("train.jsonl", "dropped.jsonl"):
        assert (interrupted / name).read_text() == (clean / name).read_text()
    rows = [json.loads(line) for line in (interrupted / "train.jsonl").read_text().splitlines()]
    dropped = [json.loads(line) for line in (interrupted / "dropped.jsonl").read_text().splitlines()]
    assert len(rows) + len(dropped) == total
    assert len({r["key"] for r in rows + dropped}) == total
    assert all(r["chosen"] != r["rejected"] for r in rows)
    reasons = [d["reason"] for d in dropped]
    assert rows and set(reasons) == {"tie", "fewer_than_two_distinct_candidates"}
    assert reasons.count("fewer_than_two_distinct_candidates") == N_UNPAIRABLE
    assert (
        summary["prompts_dropped"]
        == clean_summary["prompts_dropped"]
        == {"fewer_than_two_distinct_candidates": N_UNPAIRABLE}
    )
    assert summary["pairs_total"] == pairs
    store_keys = [json.loads(line)["key"] for line in (interrupted / "state" / "pairs.jsonl").read_text().splitlines()]
    assert len(store_keys) == len(set(store_keys)) == total
    assert summary["kept"] == clean_summary["kept"] == len(rows)


if __name__ == "__main__":
    run_pipeline(Path(sys.argv[1]))
