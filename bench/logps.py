"""The log-prob stage of a step: mini's ``next_token_logps`` against TRL's ``selective_log_softmax``, same work.

    python bench/logps.py                                  # Qwen2.5-0.5B's head shape, 8 x 65 positions, CPU
    python bench/logps.py --batch 64 --device cuda         # a GPU machine: TRL's Triton kernel is its side there

Both sides get the same logits from the same ``lm_head`` (``F.linear(hidden, weight)``, hidden 896, vocabulary
151,936: Qwen2.5-0.5B's shape, random values), take the log-prob of each next token and back-propagate an
advantage-weighted sum into the head and the hidden states, as a policy-gradient step does. TRL's side slices off
the last position first, as its GRPOTrainer does; the mini side reads the unsliced logits. Each side runs in its own
fresh process, ``--repeats`` times alternating, with ``--threads`` torch threads (the same for both). Reported per
side: the peak memory of one forward and backward above the level before it, in sizes of the logits tensor (resident
size on the CPU, its high-water mark reset first; allocated device memory on CUDA), and its time (CUDA synchronised);
then the mini / TRL ratios.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

SIDES = ("mini", "trl")


def status_bytes(field: str) -> int:
    """A size line of ``/proc/self/status`` (``VmRSS``, ``VmHWM``) in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def reset_peak_rss() -> None:
    """Start the resident high-water mark (``VmHWM``) again from the current size (Linux ``clear_refs`` 5)."""
    Path("/proc/self/clear_refs").write_text("5")


def run_side(side: str, batch: int, positions: int, hidden_size: int, vocab: int, device: str, threads: int) -> dict:
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    cuda = device == "cuda"
    if side == "mini":
        from rewardsmith.adapters.mini.logprobs import next_token_logps

        def logps_of(logits, labels):
            return next_token_logps(logits, labels)
    else:
        from trl.trainer.utils import selective_log_softmax

        def logps_of(logits, labels):
            return selective_log_softmax(logits[:, :-1], labels)

    hidden = torch.randn(batch, positions, hidden_size, device=device, requires_grad=True)
    weight = (torch.randn(vocab, hidden_size, device=device) * hidden_size**-0.5).requires_grad_()
    labels = torch.randint(0, vocab, (batch, positions - 1), device=device)
    advantages = torch.randn(batch, positions - 1, device=device)

    def step(rows: int) -> None:
        logits = torch.nn.functional.linear(hidden[:rows], weight)
        (logps_of(logits, labels[:rows]) * advantages[:rows]).sum().backward()
        hidden.grad = weight.grad = None

    step(1)  # warm on one sequence (kernels compiled), so the high-water mark left is far below the measured one
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        reset_peak_rss()
        base = status_bytes("VmRSS")
    start = time.perf_counter()
    step(batch)
    if cuda:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() if cuda else status_bytes("VmHWM")
    logits_bytes = batch * positions * vocab * 4
    return {"seconds": seconds, "peak_in_logits": (peak - base) / logits_bytes, "logits_mb": logits_bytes / 2**20}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8, help="sequences")
    parser.add_argument("--positions", type=int, default=65, help="logit positions per sequence (completion + 1)")
    parser.add_argument("--hidden", type=int, default=896)
    parser.add_argument("--vocab", type=int, default=151_936)
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads, the same for both sides")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per side, alternating; best kept")
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    device = args.device
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    shape = (args.batch, args.positions, args.hidden, args.vocab, device, args.threads)
    if args.side:
        print(json.dumps(run_side(args.side, *shape)))
        return 0
    best: dict[str, dict] = {}
    for repeat in range(args.repeats):
        for side in SIDES:
            command = [sys.executable, __file__, "--side", side, "--device", device, "--threads", str(args.threads)]
            command += ["--batch", str(args.batch), "--positions", str(args.positions)]
            command += ["--hidden", str(args.hidden), "--vocab", str(args.vocab)]
            done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
            if done.returncode != 0:
                print(f"{side} failed:\n{done.stderr[-3000:]}", file=sys.stderr)
                return 1
            result = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"  run {repeat + 1}/{args.repeats} {side}: {result['seconds'] * 1000:.0f} ms, "
                f"peak {result['peak_in_logits']:.2f} x logits",
                flush=True,
            )
            if side in best:  # the fastest time and the lowest peak: load from other tenants only adds to either
                result = {k: min(v, best[side][k]) for k, v in result.items()}
            best[side] = result
    mini, trl = best["mini"], best["trl"]
    print(f"logits {mini['logits_mb']:.0f} MB ({args.batch} x {args.positions} x {args.vocab}, float32) on {device}")
    for side in SIDES:
        r = best[side]
        print(f"{side:<5} {r['seconds'] * 1000:8.0f} ms   peak {r['peak_in_logits']:.2f} x logits")
    ratios = {
        "time_mini_over_trl": mini["seconds"] / trl["seconds"],
        "peak_mini_over_trl": mini["peak_in_logits"] / trl["peak_in_logits"],
    }
    print(f"mini / TRL: time {ratios['time_mini_over_trl']:.2f}x, peak memory {ratios['peak_mini_over_trl']:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": device, "results": best, "ratios": ratios}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
