"""What each method of the family costs: PPO, GRPO, RLOO, DPO, IPO, KTO and ORPO on one model, task and budget.

    python bench/algorithms.py                          # tiny offline model on the CPU, budget 512 sequences
    python bench/algorithms.py --budget 1024 --json algorithms.json --plot algorithms.png
    python bench/algorithms.py --device cuda --model /path/to/small-model   # a GPU machine, a real model
    python bench/algorithms.py --device cuda --model qwen2.5-0.5b --prompts 8 --generations 8 \
        --max-completion-length 64                      # a released model's shape, random weights

Every method sees the same ``--budget`` of sampled completions on the toy task ``digit_run`` (reward
``character_share``, checked by a program):

- the online methods (PPO, GRPO, RLOO) sample them from the policy while training, ``--prompts`` prompts x
  ``--generations`` completions per round (PPO makes ``--ppo-epochs`` updates per round, the group methods one);
- the offline methods (DPO, IPO, KTO, ORPO) get them once, up front, from the initial policy, scored by the same
  reward: the best and the worst completion of each prompt's group make a pair (DPO, IPO, ORPO), and each
  completion above or below its group's mean a desirable or undesirable example (KTO). They then train for as
  many updates as GRPO makes.

Per method, in a fresh process each (so one's memory high-water mark cannot hide in another's): the models held
in memory and their parameters (the reward is a function here, no model), the peak resident memory over the
process's size before training (on CUDA: the peak allocated device memory over the level before training),
sequences generated per update, wall (on CUDA synchronised) and CPU time per update, and the mean reward of
completions sampled from the trained policy on held-out prompts (the same evaluation for all). The table's memory and
time columns are the device's: peak RSS and CPU time on a CPU, peak device memory and wall time on CUDA. The table
prints each figure as a ratio to PPO, which is the point: the family is PPO with pieces removed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

METHODS = ("ppo", "grpo", "rloo", "dpo", "ipo", "kto", "orpo")
ONLINE = ("ppo", "grpo", "rloo")


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def params(model) -> int:
    return sum(p.numel() for p in model.parameters())


def offline_rows(model, tokenizer, reward, args, device) -> tuple[list[dict], list[dict]]:
    """Sample the budget from the initial policy and turn it into preference pairs and KTO examples."""
    import torch

    from rewardsmith.adapters.demo.tasks import digit_run
    from rewardsmith.adapters.mini.rollout import RewardTerms, SamplingOptions, generate_rollout, score_rollout

    prompts = digit_run(args.budget // args.generations, seed=args.seed)
    options = SamplingOptions(args.generations, 128, args.max_completion_length)
    pairs, unpaired = [], []
    terms = RewardTerms(reward)
    for start in range(0, len(prompts), args.prompts):
        rows = prompts[start : start + args.prompts]
        _, _, texts = generate_rollout(model, tokenizer, rows, options, device)
        scores = score_rollout(terms, rows, texts, args.generations)[:, 0].view(-1, args.generations)
        for i, row in enumerate(rows):
            group = texts[i * args.generations : (i + 1) * args.generations]
            s = torch.nan_to_num(scores[i], nan=0.0)
            best, worst = int(s.argmax()), int(s.argmin())
            if s[best] > s[worst]:
                pairs.append({"prompt": row["prompt"], "chosen": group[best], "rejected": group[worst]})
            mean = float(s.mean())
            for text, value in zip(group, s.tolist(), strict=True):
                if value != mean:
                    unpaired.append({"prompt": row["prompt"], "completion": text, "label": value > mean})
    return pairs, unpaired


def evaluate(model, tokenizer, reward, args, device) -> float:
    """Mean reward of completions sampled from ``model`` on held-out prompts."""
    import torch

    from rewardsmith.adapters.demo.tasks import digit_run
    from rewardsmith.adapters.mini.rollout import RewardTerms, SamplingOptions, generate_rollout, score_rollout

    torch.manual_seed(args.seed + 1000)
    rows = digit_run(16, seed=args.seed + 1000)
    options = SamplingOptions(4, 128, args.max_completion_length)
    _, _, texts = generate_rollout(model, tokenizer, rows, options, device)
    scores = score_rollout(RewardTerms(reward), rows, texts, 4)[:, 0]
    model.train()
    return float(torch.nan_to_num(scores, nan=0.0).mean())


def run_worker(method: str, args: argparse.Namespace) -> dict:
    import torch

    from rewardsmith.adapters.demo.tasks import CharacterShare, digit_run
    from rewardsmith.adapters.mini.config import resolve_device
    from rewardsmith.adapters.mini.models import load_model_and_tokenizer

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = resolve_device(args.device)
    model, tokenizer = load_model_and_tokenizer(args.model, device)
    reward = CharacterShare()
    before = evaluate(model, tokenizer, reward, args, device)
    rounds = max(1, args.budget // (args.prompts * args.generations))
    common = {"model": args.model, "seed": args.seed, "progress": False, "device": args.device}
    common["num_threads"] = args.threads
    held = {"policy": params(model)}
    prep_s = 0.0
    cuda = device.type == "cuda"
    base_rss = rss_mb()
    if cuda:  # on a GPU the device memory is the budget; the host's resident size says nothing of it
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base_device = torch.cuda.memory_allocated()
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    if method in ONLINE:
        online = {
            **common,
            "learning_rate": args.lr,
            "batch_size": args.prompts,
            "num_generations": args.generations,
            "max_completion_length": args.max_completion_length,
        }
        if method == "ppo":
            from rewardsmith.adapters.mini.ppo import MiniPPOTrainer

            config = {**online, "ppo_epochs": args.ppo_epochs, "kl_coef": args.beta, "critic": args.ppo_critic}
            trainer = MiniPPOTrainer({**config, "max_steps": rounds * args.ppo_epochs}, digit_run(64), reward)
            held = trainer.models_in_memory
            per_update = args.prompts * args.generations / args.ppo_epochs
        else:
            from rewardsmith.adapters.mini.grpo import MiniGRPOTrainer

            config = {**online, "beta": args.beta, "advantage": "rloo" if method == "rloo" else "grpo"}
            trainer = MiniGRPOTrainer({**config, "max_steps": rounds}, digit_run(64), reward, model, tokenizer)
            if trainer.reference is not None:
                held["reference"] = params(trainer.reference)
            per_update = args.prompts * args.generations
        model, tokenizer = trainer.model, trainer.tokenizer
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        history = trainer.train()
    else:
        t0 = time.perf_counter()
        pairs, unpaired = offline_rows(model, tokenizer, reward, args, device)
        prep_s = time.perf_counter() - t0
        offline = {**common, "learning_rate": args.offline_lr, "batch_size": args.prompts * 2, "max_steps": rounds}
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        if method in ("dpo", "ipo"):
            from rewardsmith.adapters.mini.dpo import train_dpo

            loss = "sigmoid" if method == "dpo" else "ipo"
            history = train_dpo({**offline, "loss": loss}, pairs, model, tokenizer)
        elif method == "kto":
            from rewardsmith.adapters.mini.kto import train_kto

            history = train_kto(offline, unpaired, model, tokenizer)
        else:
            from rewardsmith.adapters.mini.orpo import train_orpo

            history = train_orpo(offline, pairs, model, tokenizer)
        if method != "orpo":
            held["reference"] = held["policy"]  # a frozen copy of the policy
        per_update = 0
    if cuda:
        torch.cuda.synchronize()  # the wall time covers the kernels queued, not only their launch
    wall, cpu = time.perf_counter() - start_wall, time.process_time() - start_cpu
    peak_device_mb = (torch.cuda.max_memory_allocated() - base_device) / 2**20 if cuda else None
    after = evaluate(model, tokenizer, reward, args, device)
    steps = len(history)
    return {
        "method": method,
        "device": device.type,
        "models": held,
        "models_held": len(held),
        "parameters_held": sum(held.values()),
        "peak_rss_mb": max(0.0, peak_rss_mb() - base_rss),
        "peak_device_mb": peak_device_mb,
        "sequences_per_update": per_update,
        "updates": steps,
        "s_per_update": wall / steps,
        "cpu_s_per_update": cpu / steps,
        "offline_sampling_s": prep_s,
        "reward_before": before,
        "reward_after": after,
    }


def measures(results: list[dict]) -> tuple[str, str, str, str]:
    """The memory and time figures that mean something on the device run: (memory key, label, time key, label).

    On a CPU, the peak resident growth and the CPU time (machine load barely moves it); on CUDA the peak allocated
    device memory and the synchronised wall time (host RSS and CPU time there measure the launcher, not the work).
    """
    if all(r.get("peak_device_mb") is not None for r in results):
        return "peak_device_mb", "peak CUDA x", "s_per_update", "wall time per update (synchronised)"
    return "peak_rss_mb", "peak RSS x", "cpu_s_per_update", "CPU time per update"


def table(results: list[dict]) -> str:
    ppo = next(r for r in results if r["method"] == "ppo")
    memory, memory_label, seconds, seconds_label = measures(results)
    head = (
        f"{'method':<6} {'models':>6} {'params x':>9} {memory_label:>11} {'seq/update':>10} "
        f"{'time/update x':>14} {'peak MB':>9} {'reward':>15}"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        time_ratio = r[seconds] / ppo[seconds]
        memory_ratio = r[memory] / ppo[memory] if ppo[memory] else float("nan")
        lines.append(
            f"{r['method']:<6} {r['models_held']:>6} {r['parameters_held'] / ppo['parameters_held']:>9.2f} "
            f"{memory_ratio:>11.2f} {r['sequences_per_update']:>10g} {time_ratio:>14.2f} {r[memory]:>9.0f} "
            f"{r['reward_before']:>6.2f} -> {r['reward_after']:<5.2f}"
        )
    lines.append(f"ratios are to PPO; time per update is {seconds_label}")
    return "\n".join(lines)


def plot(results: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["method"].upper() for r in results]
    ppo = next(r for r in results if r["method"] == "ppo")
    _, _, seconds, seconds_label = measures(results)
    panels = [
        ("parameters held (x PPO)", [r["parameters_held"] / ppo["parameters_held"] for r in results]),
        (f"{seconds_label} (x PPO)", [r[seconds] / ppo[seconds] for r in results]),
        ("reward after the budget", [r["reward_after"] for r in results]),
    ]
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.2))
    for ax, (title, values) in zip(axes, panels, strict=True):
        ax.bar(names, values, color=["#b44" if n == "PPO" else "#48a" for n in names])
        ax.set_title(title, fontsize=10)
        ax.tick_params(axis="x", labelrotation=45, labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument(
        "--model",
        default="tiny",
        help="model directory, or 'tiny' or a released model's dimensions with random weights ('qwen2.5-0.5b', "
        "'qwen2.5-1.5b'), built offline",
    )
    parser.add_argument("--device", default="auto")
    parser.add_argument("--budget", type=int, default=512, help="sampled completions per method")
    parser.add_argument("--prompts", type=int, default=4, help="prompts per round (online) / pairs per step x 2")
    parser.add_argument("--generations", type=int, default=8, help="completions per prompt")
    parser.add_argument("--max-completion-length", type=int, default=16)
    parser.add_argument("--ppo-epochs", type=int, default=2)
    parser.add_argument("--ppo-critic", choices=("separate", "value_head"), default="separate")
    parser.add_argument("--beta", type=float, default=0.04, help="KL coefficient (PPO, GRPO, RLOO: a reference)")
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--offline-lr", type=float, default=1e-2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    parser.add_argument("--plot", default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        vars(args).update(json.loads(os.environ["REWARDSMITH_BENCH_ARGS"]))
        print(json.dumps(run_worker(args.worker, args)))
        return 0
    from rewardsmith.adapters.demo.tiny_model import SHAPES, build_tiny_model

    if args.model == "tiny" or args.model in SHAPES:  # one model for every worker: the same starting weights
        folder = tempfile.mkdtemp(prefix="rewardsmith-bench-")
        args.model = str(build_tiny_model(folder, shape=args.model))
    results = []
    for method in args.methods.split(","):
        options = {k: v for k, v in vars(args).items() if k not in ("worker", "json", "plot")}
        command = [sys.executable, __file__, "--worker", method]
        env = {**os.environ, "REWARDSMITH_BENCH_ARGS": json.dumps(options)}
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
            return 1
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"{method}: done", file=sys.stderr)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    if args.plot:
        plot(results, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
