"""Benchmark: rewardkit's ``math_equivalence`` against an open-r1-style math-verify reward, same run.

The workload is GRPO-shaped: each problem's gold is scored against ``--generations`` completions.
Every pair carries the verdict it should get (known by construction), so each disagreement between
the two rewards can be checked. Prints completions/s of each, the ratio, p50/p99 latency per
completion and the disagreements.

    python bench/math_reward.py                 # 1,000 pairs
    python bench/math_reward.py --pairs 2000 --towers 1   # add exponent-tower completions

``--towers`` adds ``\boxed{10^{10^{10}}}`` completions: on the main thread the baseline spends its
5 s SIGALRM timeout on each (off the main thread TRL switches that alarm off and the power runs for
minutes); rewardkit settles it by size without evaluating it.
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import time
from dataclasses import dataclass
from fractions import Fraction
from math import gcd


@dataclass(frozen=True)
class Pair:
    category: str
    gold: str
    completion: str
    expected: float  # the verdict a correct grader gives


def _box(text: str) -> str:
    return f"Let me work through it step by step. Therefore the answer is $\\boxed{{{text}}}$."


def _integers(rng: random.Random, g: int) -> list[Pair]:
    n = rng.choice([rng.randint(0, 99), rng.randint(100, 9999), rng.randint(10**6, 10**9)])
    gold = rng.choice([str(n), f"${n}$", f"Natalia sold some clips.\n#### {n}"])
    variants = [
        (_box(str(n)), 1.0),
        (f"So in total she has {n} clips. The final answer is {n}.", 1.0),
        (_box(f"{n:,}"), 1.0),
        (_box(str(n + rng.randint(1, 9))), 0.0),
        (_box(str(-n - 1)), 0.0),
        ("I am not sure how to solve this.", 0.0),
    ]
    return [Pair("integer", gold, *rng.choice(variants)) for _ in range(g)]


def _fractions(rng: random.Random, g: int) -> list[Pair]:
    while True:
        a, b = rng.randint(1, 20), rng.choice([2, 3, 4, 5, 6, 8, 10, 12, 16, 20])
        if gcd(a, b) == 1 and a != b:
            break
    gold = rng.choice([f"\\frac{{{a}}}{{{b}}}", f"$\\frac{{{a}}}{{{b}}}$"])
    k = rng.randint(2, 5)
    variants = [
        (_box(f"\\frac{{{k * a}}}{{{k * b}}}"), 1.0),
        (_box(f"\\dfrac{{{a}}}{{{b}}}"), 1.0),
        (_box(f"{a}/{b}"), 1.0),
        (_box(f"\\frac{{{b}}}{{{a}}}"), 0.0),
        (_box(f"\\frac{{{a + 1}}}{{{b}}}"), 0.0),
    ]
    value = Fraction(a, b)
    if 10**6 % value.denominator == 0:
        variants.append((_box(str(float(value))), 1.0))
    return [Pair("fraction", gold, *rng.choice(variants)) for _ in range(g)]


def _expressions(rng: random.Random, g: int) -> list[Pair]:
    a, b = rng.sample(range(2, 10), 2)
    k, m = rng.randint(2, 6), rng.choice([2, 3, 5, 6, 7])
    kind = rng.choice(["linear", "sqrt", "polynomial"])
    if kind == "polynomial":  # needs algebra: these go to the sympy workers
        gold = f"x^2+{a + b}x+{a * b}"
        variants = [
            (_box(f"(x+{a})(x+{b})"), 1.0),
            (_box(f"(x+{b})(x+{a})"), 1.0),
            (_box(f"(x+{a})(x-{b})"), 0.0),
            (_box(f"x^2+{a * b}x+{a + b}"), 0.0),
        ]
    elif kind == "linear":
        gold = f"{a}x+{b}"
        variants = [
            (_box(f"{b}+{a}x"), 1.0),
            (_box(f"{a}x + {b}"), 1.0),
            (_box(f"{a}x-{b}"), 0.0),
            (_box(f"{b}x+{a}"), 0.0),
        ]
    else:
        gold = f"{k}\\sqrt{{{m}}}"
        variants = [
            (_box(f"\\sqrt{{{k * k * m}}}"), 1.0),
            (_box(f"{k}\\sqrt{{{m}}}"), 1.0),
            (_box(f"\\sqrt{{{k * m}}}"), 0.0),
        ]
    return [Pair("expression", gold, *rng.choice(variants)) for _ in range(g)]


def _intervals_sets(rng: random.Random, g: int) -> list[Pair]:
    a, b = sorted(rng.sample(range(-9, 10), 2))
    kind = rng.choice(["interval", "set", "tuple"])
    if kind == "interval":
        gold = f"({a}, {b}]"
        variants = [
            (_box(f"({a},{b}]"), 1.0),
            (_box(f"{a} < x \\le {b}"), 1.0),
            (_box(f"({a}, {b})"), 0.0),
            (_box(f"[{a}, {b}]"), 0.0),
        ]
    elif kind == "set":
        c = b + rng.randint(1, 5)
        gold = f"\\{{{a}, {b}, {c}\\}}"
        variants = [
            (_box(f"\\{{{c}, {a}, {b}\\}}"), 1.0),
            (_box(f"{b}, {c}, {a}"), 1.0),
            (_box(f"\\{{{a}, {b}\\}}"), 0.0),
            (_box(f"\\{{{a}, {b}, {c + 1}\\}}"), 0.0),
        ]
    else:
        gold = f"({a}, {b})"
        variants = [(_box(f"({a}, {b})"), 1.0), (_box(f"({b}, {a})"), 0.0), (_box(f"({a}, {b + 1})"), 0.0)]
    return [Pair(kind, gold, *rng.choice(variants)) for _ in range(g)]


def _no_answers(rng: random.Random, g: int) -> list[Pair]:
    gold = str(rng.randint(1, 500))
    variants = [
        "",
        "Hmm, let me think about this problem more carefully before answering.",
        "<think>We need to compute the sum first and then",
        "The computation is left as an exercise.",
    ]
    return [Pair("no answer", gold, rng.choice(variants), 0.0) for _ in range(g)]


def workload(pairs: int, generations: int, towers: int, seed: int = 0) -> list[Pair]:
    rng = random.Random(seed)
    makers = [_integers] * 3 + [_fractions] * 2 + [_expressions] * 2 + [_intervals_sets] * 2 + [_no_answers]
    out: list[Pair] = []
    while len(out) < pairs:
        out.extend(rng.choice(makers)(rng, generations))
    out = out[:pairs]
    out.extend(Pair("tower", "5", _box("10^{10^{10}}"), 0.0) for _ in range(towers))
    return out


def open_r1_accuracy(completion: str, solution: str) -> float | None:
    """open-r1's ``accuracy_reward`` for one sample (same math-verify calls and configuration)."""
    from latex2sympy2_extended import NormalizationConfig
    from math_verify import LatexExtractionConfig, parse, verify

    gold_parsed = parse(solution, extraction_mode="first_match")
    if len(gold_parsed) == 0:
        return None
    answer_parsed = parse(
        completion,
        extraction_config=[
            LatexExtractionConfig(
                normalization_config=NormalizationConfig(
                    nits=False, malformed_operators=False, basic_latex=True, equations=True, boxed="all", units=True
                ),
                boxed_match_priority=0,
                try_extract_without_anchor=False,
            )
        ],
        extraction_mode="first_match",
    )
    try:
        return float(verify(gold_parsed, answer_parsed))
    except Exception:
        return None


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--generations", type=int, default=8, help="completions per gold (GRPO num_generations)")
    parser.add_argument("--batch", type=int, default=64, help="completions per reward call")
    parser.add_argument("--workers", type=int, default=None, help="rewardkit worker processes (default: all cores)")
    parser.add_argument("--towers", type=int, default=0, help="exponent-tower completions to add")
    parser.add_argument("--show", type=int, default=25, help="disagreements to print")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # math-verify logs every timeout and parse failure

    from rewardkit.rewards.math.reward import MathEquivalence

    pairs = workload(args.pairs, args.generations, args.towers)
    counts: dict[str, int] = {}
    for p in pairs:
        counts[p.category] = counts.get(p.category, 0) + 1
    print(
        f"workload: {len(pairs)} pairs, {args.generations} per gold: "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    )

    # Both sides warm: rewardkit's workers started (a once-per-process cost, printed), math-verify imported.
    reward = MathEquivalence(workers=args.workers)
    start = time.perf_counter()
    reward.pool.warm_up()
    print(f"rewardkit worker start: {time.perf_counter() - start:.1f} s for {reward.pool.workers} workers (once)")
    open_r1_accuracy(_box("1"), "1")

    # rewardkit, throughput: batched like a trainer step.
    start = time.perf_counter()
    results = []
    for i in range(0, len(pairs), args.batch):
        chunk = pairs[i : i + args.batch]
        results.extend(reward.details([p.completion for p in chunk], solution=[p.gold for p in chunk]))
    ours_s = time.perf_counter() - start
    ours = [r.score for r in results]
    symbolic = sum("sympy" in r.reason or "timeout" in r.reason for r in results)
    print(f"rewardkit decided {len(results) - symbolic} pairs in-process and {symbolic} with sympy workers")
    # rewardkit, latency: one completion per call, a fresh reward (empty caches) on warm workers.
    single = MathEquivalence(workers=args.workers)
    single.pool.warm_up()
    ours_lat = []
    for p in pairs:
        t = time.perf_counter()
        single([p.completion], solution=[p.gold])
        ours_lat.append(time.perf_counter() - t)
    reward.close()
    single.close()

    # the baseline, sequential in the main thread (where its SIGALRM timeouts work).
    base: list[float | None] = []
    base_lat = []
    start = time.perf_counter()
    for p in pairs:
        t = time.perf_counter()
        base.append(open_r1_accuracy(p.completion, p.gold))
        base_lat.append(time.perf_counter() - t)
    base_s = time.perf_counter() - start

    n = len(pairs)
    print(f"\n{'':24}{'completions/s':>14}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}{'accuracy':>10}")
    for name, seconds, lat, scores in (
        ("rewardkit", ours_s, ours_lat, ours),
        ("open-r1 math-verify", base_s, base_lat, base),
    ):
        accuracy = sum(s == p.expected for s, p in zip(scores, pairs, strict=True)) / n
        print(
            f"{name:24}{n / seconds:14.1f}{1000 * statistics.median(lat):10.2f}"
            f"{1000 * _percentile(lat, 0.99):10.2f}{1000 * max(lat):10.1f}{accuracy:10.1%}"
        )
    print(f"\nratio (rewardkit / baseline completions/s): {base_s / ours_s:.1f}x")

    disagreements = [(p, o, b) for p, o, b in zip(pairs, ours, base, strict=True) if o != b]
    ours_right = sum(o == p.expected for p, o, _ in disagreements)
    base_right = sum(b == p.expected for p, _, b in disagreements)
    print(f"\ndisagreements: {len(disagreements)}; rewardkit right on {ours_right}, baseline right on {base_right}")
    by_kind: dict[tuple[str, str], int] = {}
    for p, o, b in disagreements:
        key = (p.category, f"expected {p.expected} rewardkit {o} baseline {b}")
        by_kind[key] = by_kind.get(key, 0) + 1
    for (category, what), count in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        print(f"  {count:4d} x {category:10} {what}")
    shown: set[tuple[str, str]] = set()
    for p, o, b in disagreements:
        if len(shown) >= args.show:
            break
        if (p.gold, p.completion) in shown:
            continue
        shown.add((p.gold, p.completion))
        print(
            f"  gold={p.gold!r:32} completion={p.completion[-60:]!r}\n      expected={p.expected} rewardkit={o} "
            f"baseline={b}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
