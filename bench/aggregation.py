"""Sum then normalise, or normalise then sum (GDPO): one two-term spec, both aggregations, the same budget.

    python bench/aggregation.py                        # tiny offline model on the CPU, 512 completions, 3 seeds
    python bench/aggregation.py --budget 1024 --seeds 0,1,2,3 --json aggregation.json
    python bench/aggregation.py --device cuda --model /path/to/small-model

The spec has a format term and an accuracy term on the toy task ``digit_run`` (what a random tiny model can learn
on a CPU): ``format`` is binary, whether the answer opens with a digit (``regex_match``), and ``accuracy`` the share
of digits in it (``character_share``), both weight 1. In a group the binary term is often constant (no spread,
nothing to learn) and, when it is not, it spreads wider than the share, so summed first it sets the direction of
most updates; normalised first, each term has the same say in every group where it varies.

Per aggregation and seed, the mini GRPO trainer (``reward_aggregation``) trains the same initial model on the same
prompts for ``--budget`` sampled completions; the table gives each term's mean on held-out prompts before and after,
averaged over the seeds (with the spread between seeds), and the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

AGGREGATIONS = ("sum_then_normalize", "normalize_then_sum")
SPEC = {
    "rewards": [
        {"name": "regex_match", "label": "format", "config": {"pattern": "^\\s*[0-9]"}},
        {"name": "character_share", "label": "accuracy"},
    ]
}


def evaluate(model, tokenizer, terms, args, device) -> dict[str, float]:
    """Each term's mean over completions sampled from ``model`` on held-out prompts (the same for every run)."""
    import torch

    from rewardsmith.adapters.demo.tasks import digit_run
    from rewardsmith.adapters.mini.rollout import SamplingOptions, generate_rollout, score_rollout

    torch.manual_seed(10_000)
    rows = digit_run(args.eval_prompts, seed=10_000)
    options = SamplingOptions(4, 128, args.max_completion_length)
    _, _, texts = generate_rollout(model, tokenizer, rows, options, device)
    table = torch.nan_to_num(score_rollout(terms, rows, texts, 4), nan=0.0)
    model.train()
    return {name: float(table[:, k].mean()) for k, name in enumerate(terms.names)}


def run(aggregation: str, seed: int, args: argparse.Namespace) -> dict:
    import torch

    from rewardsmith.adapters.demo.tasks import digit_run
    from rewardsmith.adapters.mini.config import resolve_device
    from rewardsmith.adapters.mini.grpo import MiniGRPOTrainer
    from rewardsmith.adapters.mini.models import load_model_and_tokenizer
    from rewardsmith.adapters.mini.rollout import RewardTerms
    from rewardsmith.adapters.spec import load_spec

    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    model, tokenizer = load_model_and_tokenizer(args.model, device)
    spec = load_spec(SPEC)
    terms = RewardTerms(spec)
    before = evaluate(model, tokenizer, terms, args, device)
    rounds = max(1, args.budget // (args.prompts * args.generations))
    config = {
        "model": args.model,
        "device": args.device,
        "num_threads": args.threads,
        "seed": seed,
        "progress": False,
        "learning_rate": args.lr,
        "batch_size": args.prompts,
        "num_generations": args.generations,
        "max_completion_length": args.max_completion_length,
        "max_steps": rounds,
        "reward_aggregation": aggregation,
    }
    trainer = MiniGRPOTrainer(config, digit_run(64, seed=seed), spec, model, tokenizer)
    start = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - start
    after = evaluate(trainer.model, trainer.tokenizer, terms, args, device)
    return {
        "aggregation": aggregation,
        "seed": seed,
        "updates": rounds,
        "wall_s": wall,
        "before": before,
        "after": after,
    }


def summary(results: list[dict]) -> list[dict]:
    """Per aggregation: each term's mean before and after over the seeds, the spread between seeds, the time."""
    out = []
    for aggregation in AGGREGATIONS:
        runs = [r for r in results if r["aggregation"] == aggregation]
        if not runs:
            continue
        row: dict = {
            "aggregation": aggregation,
            "seeds": len(runs),
            "wall_s": statistics.mean(r["wall_s"] for r in runs),
        }
        for name in runs[0]["after"]:
            after = [r["after"][name] for r in runs]
            row[name] = {
                "before": statistics.mean(r["before"][name] for r in runs),
                "after": statistics.mean(after),
                "spread": statistics.pstdev(after),
            }
        out.append(row)
    return out


def table(rows: list[dict]) -> str:
    names = [k for k in rows[0] if k not in ("aggregation", "seeds", "wall_s")]
    head = f"{'aggregation':<20}" + "".join(f" {name + ' before -> after (+-seeds)':>34}" for name in names)
    lines = [head + f" {'s/run':>7}", "-" * (len(head) + 8)]
    for row in rows:
        cells = "".join(
            f" {row[n]['before']:>14.3f} -> {row[n]['after']:.3f} (+-{row[n]['spread']:.3f})" for n in names
        )
        lines.append(f"{row['aggregation']:<20}{cells} {row['wall_s']:>7.1f}")
    lines.append(f"{rows[0]['seeds']} seeds each; held-out means of each term, weights 1 and 1")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny", help="model directory, or 'tiny' (built offline)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--budget", type=int, default=512, help="sampled completions per run")
    parser.add_argument("--prompts", type=int, default=4, help="prompts per round")
    parser.add_argument("--generations", type=int, default=8, help="completions per prompt")
    parser.add_argument("--max-completion-length", type=int, default=16)
    parser.add_argument("--eval-prompts", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    if args.model == "tiny":  # one model for every run, so they start from the same weights
        from rewardsmith.adapters.demo.tiny_model import build_tiny_model

        args.model = str(build_tiny_model(tempfile.mkdtemp(prefix="rewardsmith-bench-")))
    results = [run(a, int(s), args) for s in args.seeds.split(",") for a in AGGREGATIONS]
    rows = summary(results)
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": results, "summary": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
