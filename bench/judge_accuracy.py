"""Benchmark: how often local judges pick the better response, on sets whose answer is known.

Sets: ``audit`` = the generated ``mixed`` audit set (math, code, format; gold decided by rewardsmith's verifiers;
balanced so that position and length cannot pass for accuracy) and ``demo`` = the bundled RLAIF demo pairs
whose data marks the better response (18 of the 20 pairs), each judged under the principle ``rlaif pairs
--demo`` samples for it. Methods, all through rewardsmith's judges against a llama.cpp server on 127.0.0.1:

- ``pairwise``: :class:`~rewardsmith.judges.pairwise.PairwiseJudge`, both orders, option log-probs averaged;
- ``pairwise+calibration``: the same with the content-free prior divided out (:mod:`rewardsmith.judges.calibration`);
- ``likelihood``: :class:`~rewardsmith.judges.pointwise.LikelihoodJudge`, mean log-prob per token of each response;
- ``rubric``: :class:`~rewardsmith.judges.scale.ScaleJudge` (1-5, probability-weighted) per response, higher wins.

Per cell: accuracy with a 95 % Wilson interval (ties and abstentions count as wrong), swap consistency (both
orders pick the same response; position-free methods are consistent by construction) and seconds per pair
(one request at a time, so the numbers add up; the machine's load shows in them).

    python bench/judge_accuracy.py                       # packaged SmolLM2, 60 audit items + the demo pairs
    python bench/judge_accuracy.py --model other.gguf --methods pairwise likelihood --json out.json

A GGUF without a chat template (Gemma 3 270M base, for one) cannot be judged through the chat server this way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import tempfile
import time
from pathlib import Path

METHODS = ("pairwise", "pairwise+calibration", "likelihood", "rubric")


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float, float]:
    """Share ``k/n`` and its 95 % Wilson score interval."""
    if n == 0:
        return math.nan, math.nan, math.nan
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, centre - half, centre + half


def audit_items(n: int, seed: int) -> list[dict]:
    from rewardsmith.audit.generators import generate_set

    return [
        {"prompt": it.prompt, "a": it.response_a, "b": it.response_b, "gold": it.gold, "question": None}
        for it in generate_set("mixed", n=n, seed=seed)
    ]


def demo_items() -> list[dict]:
    from rewardsmith.constitutions.loader import load_constitution
    from rewardsmith.constitutions.pairs import PairsConfig, pair_tasks, sample_principles
    from rewardsmith.constitutions.prompts import demo_prompts_path, read_prompt_items

    constitution = load_constitution("helpful-harmless")
    items = read_prompt_items(demo_prompts_path(), responses_column="responses", reference_column="better")
    rows = []
    for task in pair_tasks(items, PairsConfig()):
        reference = task.item.reference
        gold = "a" if reference == task.response_a else "b" if reference == task.response_b else None
        if gold is not None:
            principle = sample_principles(constitution, task.key, 0, 1)[0]
            rows.append({"prompt": task.item.text, "a": task.response_a, "b": task.response_b, "gold": gold,
                         "question": principle.comparison})  # fmt: skip
    return rows


def build(method: str, client, constitution, state_dir: Path):
    """The judge of ``method``; demo pairs get the constitution's comparison template, as ``rlaif pairs`` does."""
    from rewardsmith.constitutions.judging import comparison_template
    from rewardsmith.judges.calibration import CalibratedPairwiseJudge
    from rewardsmith.judges.pairwise import PairwiseJudge
    from rewardsmith.judges.pointwise import LikelihoodJudge
    from rewardsmith.judges.scale import ScaleJudge

    if method == "likelihood":
        return LikelihoodJudge(client)
    if method == "rubric":
        return ScaleJudge(client)
    template = None
    if constitution is not None:
        template = comparison_template(constitution, None, chain_of_thought=False, state_dir=state_dir)
    judge = PairwiseJudge(client, template=template)
    return CalibratedPairwiseJudge(judge) if method == "pairwise+calibration" else judge


def judge_one(judge, method: str, item: dict) -> tuple[float | None, bool | None]:
    """``(P(a better), swap-consistent)``; consistency is ``None`` for position-free methods."""
    if method == "rubric":
        a, b = (judge.judge(item["prompt"], r, reference=None) for r in (item["a"], item["b"]))
        if a.score is None or b.score is None:
            return None, None
        return 1.0 / (1.0 + math.exp(-(a.score - b.score))), None
    verdict = judge.judge(item["prompt"], item["a"], item["b"], question=item["question"])
    consistent = (
        None if method == "likelihood" else not verdict.flipped and None not in (verdict.ab.choice, verdict.ba.choice)
    )
    return verdict.prob_a, consistent


def run_cell(judge, method: str, items: list[dict]) -> dict:
    correct = consistent = counted = abstained = 0
    started = time.perf_counter()
    for item in items:
        prob_a, same = judge_one(judge, method, item)
        abstained += prob_a is None
        correct += prob_a is not None and ((prob_a > 0.5) if item["gold"] == "a" else (prob_a < 0.5))
        if same is not None:
            counted += 1
            consistent += same
    seconds = time.perf_counter() - started
    accuracy, low, high = wilson(correct, len(items))
    return {
        "n": len(items), "correct": correct, "accuracy": accuracy, "ci95": [low, high],
        "consistency": consistent / counted if counted else None, "abstained": abstained,
        "seconds_per_pair": seconds / len(items),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="GGUF file (default: the packaged SmolLM2-135M-Instruct)")
    parser.add_argument("--n", type=int, default=60, help="mixed audit items")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sets", nargs="+", default=["audit", "demo"], choices=["audit", "demo"])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)

    from rewardsmith.constitutions.loader import load_constitution
    from rewardsmith.judges.clients.embedded import EmbeddedServer, llama_server_missing
    from rewardsmith.judges.clients.factory import make_client

    missing = llama_server_missing()
    if missing:
        print(f"bench/judge_accuracy.py needs the llama.cpp server: {missing}", file=sys.stderr)
        return 2
    sets = {"audit": audit_items(args.n, args.seed)} if "audit" in args.sets else {}
    if "demo" in args.sets:
        sets["demo"] = demo_items()
    constitution = load_constitution("helpful-harmless")
    rows = []
    print(
        f"{'set':<6} {'method':<22} {'n':>3} {'accuracy':>9} {'95% CI':>14} {'consistent':>10} {'abstained':>9} "
        f"{'s/pair':>7}"
    )
    with EmbeddedServer(args.model) as server, tempfile.TemporaryDirectory() as state:
        for set_name, items in sets.items():
            for method in args.methods:
                client = make_client("openai", model=server.model, base_url=server.base_url, concurrency=1)
                judge = build(method, client, constitution if set_name == "demo" else None, Path(state))
                row = {"set": set_name, "method": method, "model": str(server.model_path.name)}
                row.update(run_cell(judge, method, items))
                asyncio.run(client.aclose())
                rows.append(row)
                low, high = row["ci95"]
                consistency = "n/a" if row["consistency"] is None else f"{row['consistency']:.0%}"
                print(
                    f"{set_name:<6} {method:<22} {row['n']:>3} {row['accuracy']:>9.1%} [{low:.2f}, {high:.2f}] "
                    f"{consistency:>10} {row['abstained']:>9} {row['seconds_per_pair']:>7.2f}",
                    flush=True,
                )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
