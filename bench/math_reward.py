"""Benchmark: rewardsmith's ``math_equivalence`` against math-verify, same run, same pairs.

Two baselines: math-verify configured correctly (the gold wrapped in ``$…$``, default extraction on both
sides: ``verify(parse(f"${gold}$"), parse(completion))``) and open-r1's ``accuracy_reward`` configuration.
Workloads (``--workload``), each GRPO-shaped (one gold scored against ``--generations`` completions), each
pair carrying the verdict it should get:

- ``mixed``: integers, fractions, expressions, intervals, sets, tuples and completions with no answer;
- ``hard``: only pairs that need the symbolic stage (factorisations, pi, radicals, logs, trig), right and wrong;
- ``math500``: answer types drawn in proportions chosen to resemble MATH-500's golds (about half integers,
  then fractions, radicals, expressions, tuples, intervals, text/choices; an approximation, not measured on
  the dataset), written the way MATH writes them (``10,\\!000``, ``\\$``, ``^\\circ``, ``\\dfrac``).

Prints completions/s, p50/p99/max latency per completion and accuracy for each, the throughput ratios, and
the per-pair latency ratio against correctly configured math-verify (rewardsmith's single-call time on warm
workers / math-verify's time on the same pair): its median, p99 and slowest pair.

    python bench/math_reward.py                          # mixed, 1,000 pairs
    python bench/math_reward.py --workload hard --pairs 200
    python bench/math_reward.py --workload math500 --pairs 400
    python bench/math_reward.py --pairs 2000 --towers 1  # add exponent-tower completions

``--towers`` adds ``\\boxed{10^{10^{10}}}`` completions: on the main thread the baselines spend their
5 s SIGALRM timeout on each (off the main thread TRL switches that alarm off and the power runs for
minutes); rewardsmith settles it by size without evaluating it.
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


def _hard(rng: random.Random, g: int) -> list[Pair]:
    """Pairs that all need the symbolic stage: equal forms no structural rule settles, and wrong ones."""
    a, b = rng.sample(range(2, 10), 2)
    k = rng.randint(3, 12)
    kind = rng.choice(["pi", "factor", "radical", "log", "trig", "rational"])
    if kind == "pi":
        gold = f"\\frac{{{a}\\pi}}{{{k}}}"
        variants = [
            (_box(f"{a}\\pi/{k}"), 1.0),
            (_box(f"\\frac{{{a}}}{{{k}}}\\pi"), 1.0),
            (_box(f"{a}\\pi/{k + 1}"), 0.0),
        ]
    elif kind == "factor":
        gold = f"x^2+{a + b}x+{a * b}"
        variants = [(_box(f"(x+{a})(x+{b})"), 1.0), (_box(f"(x+{a})(x-{b})"), 0.0), (_box(f"(x+{a})^2"), 0.0)]
    elif kind == "radical":
        gold = f"\\frac{{{a}+\\sqrt{{{b}}}}}{{{k}}}"
        variants = [
            (_box(f"\\frac{{\\sqrt{{{b}}}+{a}}}{{{k}}}"), 1.0),
            (_box(f"\\frac{{{a}}}{{{k}}}+\\frac{{\\sqrt{{{b}}}}}{{{k}}}"), 1.0),
            (_box(f"\\frac{{{a}-\\sqrt{{{b}}}}}{{{k}}}"), 0.0),
        ]
    elif kind == "log":
        gold = f"\\log_{{2}} {2**a}"
        variants = [(_box(str(a)), 1.0), (_box(str(a + 1)), 0.0), (_box(f"\\frac{{\\ln {2**a}}}{{\\ln 2}}"), 1.0)]
    elif kind == "trig":
        gold = "\\frac{\\sqrt{3}}{2}"
        variants = [
            (_box("\\sin\\frac{\\pi}{3}"), 1.0),
            (_box("\\cos\\frac{\\pi}{3}"), 0.0),
            (_box("\\sqrt{3}/2"), 1.0),
        ]
    else:
        gold = f"\\frac{{\\sqrt{{{b}}}}}{{{b}}}"
        variants = [(_box(f"\\frac{{1}}{{\\sqrt{{{b}}}}}"), 1.0), (_box(f"\\frac{{1}}{{\\sqrt{{{b + 1}}}}}"), 0.0)]
    return [Pair(f"hard {kind}", gold, *rng.choice(variants)) for _ in range(g)]


def _math500(rng: random.Random, g: int) -> list[Pair]:
    """One MATH-style problem: the answer type drawn with MATH-500-like weights, golds written as MATH writes them."""
    kind = rng.choices(
        [
            "integer",
            "big integer",
            "fraction",
            "radical",
            "expression",
            "tuple",
            "interval",
            "text",
            "degrees",
            "money",
        ],
        weights=[42, 6, 14, 10, 9, 6, 4, 5, 2, 2],
    )[0]
    n = rng.randint(2, 999)
    if kind == "integer":
        gold, right, wrong = str(n), [str(n), f"{n}.0"], [str(n + 1), str(-n)]
    elif kind == "big integer":
        m = rng.randint(10_000, 999_999)
        gold, right, wrong = f"{m:,}".replace(",", ",\\!"), [str(m), f"{m:,}"], [str(m + 10)]
    elif kind == "fraction":
        a, b = rng.randint(1, 19), rng.choice([3, 7, 9, 11, 13])
        gold, right, wrong = f"\\frac{{{a}}}{{{b}}}", [f"\\dfrac{{{a}}}{{{b}}}", f"{a}/{b}"], [f"\\frac{{{b}}}{{{a}}}"]
    elif kind == "radical":
        a, b = rng.randint(2, 9), rng.choice([2, 3, 5, 6, 7])
        gold, right, wrong = f"{a}\\sqrt{{{b}}}", [f"\\sqrt{{{a * a * b}}}", f"{a}\\sqrt{b}"], [f"{a + 1}\\sqrt{{{b}}}"]
    elif kind == "expression":
        a = rng.randint(2, 9)
        gold, right, wrong = f"{a}\\pi", [f"{a}\\pi", f"\\pi \\cdot {a}"], [f"{a + 1}\\pi", f"\\frac{{{a}}}{{\\pi}}"]
    elif kind == "tuple":
        a, b = rng.randint(-9, 9), rng.randint(-9, 9)
        gold, right, wrong = f"({a},{b})", [f"({a}, {b})", f"\\left({a},{b}\\right)"], [f"({b},{a + 1})"]
    elif kind == "interval":
        a, b = sorted(rng.sample(range(-9, 10), 2))
        gold, right, wrong = f"[{a},{b})", [f"[{a}, {b})", f"{a} \\le x < {b}"], [f"({a},{b})", f"[{a},{b}]"]
    elif kind == "text":
        gold = rng.choice(["\\text{(C)}", "\\text{even}", "\\text{Monday}"])
        word = gold[6:-1]
        right, wrong = [word, f"\\text{{{word}}}"], ["\\text{(D)}" if "(" in word else "\\text{odd}"]
    elif kind == "degrees":
        gold, right, wrong = f"{n % 180}^\\circ", [f"{n % 180}", f"{n % 180}^{{\\circ}}"], [f"{n % 180 + 1}^\\circ"]
    else:
        cents = rng.randint(100, 99999)
        gold = f"\\${cents // 100}.{cents % 100:02d}"
        right, wrong = [f"{cents // 100}.{cents % 100:02d}", f"\\${cents / 100:.2f}"], [f"{cents // 100 + 1}.00"]
    variants = [(_box(r), 1.0) for r in right] + [(_box(w), 0.0) for w in wrong]
    return [Pair(f"math500 {kind}", gold, *rng.choice(variants)) for _ in range(g)]


WORKLOADS = {
    "mixed": [_integers] * 3 + [_fractions] * 2 + [_expressions] * 2 + [_intervals_sets] * 2 + [_no_answers],
    "hard": [_hard],
    "math500": [_math500],
}


def workload(pairs: int, generations: int, towers: int, seed: int = 0, kind: str = "mixed") -> list[Pair]:
    rng = random.Random(seed)
    makers = WORKLOADS[kind]
    out: list[Pair] = []
    while len(out) < pairs:
        out.extend(rng.choice(makers)(rng, generations))
    out = out[:pairs]
    out.extend(Pair("tower", "5", _box("10^{10^{10}}"), 0.0) for _ in range(towers))
    return out


def math_verify_gold(gold: str) -> str:
    """The gold as math-verify should receive it: the answer itself, wrapped in ``$…$``."""
    text = gold.rsplit("####", 1)[1].strip() if "####" in gold else gold.strip()
    if text.startswith("$") and text.endswith("$"):
        return text
    return f"${text}$"


def math_verify_accuracy(completion: str, solution: str) -> float | None:
    """math-verify configured correctly: gold wrapped in ``$…$``, default extraction of both sides."""
    from math_verify import parse, verify

    gold_parsed = parse(math_verify_gold(solution))
    if len(gold_parsed) == 0:
        return None
    try:
        return float(verify(gold_parsed, parse(completion)))
    except Exception:
        return None


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


def _run_baseline(fn, pairs: list[Pair]) -> tuple[list[float | None], list[float], float]:
    """Sequential in the main thread, where math-verify's SIGALRM timeouts work."""
    scores, latencies = [], []
    start = time.perf_counter()
    for p in pairs:
        t = time.perf_counter()
        scores.append(fn(p.completion, p.gold))
        latencies.append(time.perf_counter() - t)
    return scores, latencies, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="mixed")
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--generations", type=int, default=8, help="completions per gold (GRPO num_generations)")
    parser.add_argument("--batch", type=int, default=64, help="completions per reward call")
    parser.add_argument("--workers", type=int, default=None, help="rewardsmith worker processes (default: all cores)")
    parser.add_argument("--towers", type=int, default=0, help="exponent-tower completions to add")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=15, help="disagreements and slowest pairs to print")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # math-verify logs every timeout and parse failure

    from rewardsmith.rewards.math.reward import MathEquivalence

    pairs = workload(args.pairs, args.generations, args.towers, args.seed, args.workload)
    counts: dict[str, int] = {}
    for p in pairs:
        counts[p.category] = counts.get(p.category, 0) + 1
    print(
        f"workload {args.workload}: {len(pairs)} pairs, {args.generations} per gold: "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    )

    # Everything warm: rewardsmith's workers started (a once-per-process cost, printed), math-verify imported.
    reward = MathEquivalence(workers=args.workers)
    start = time.perf_counter()
    reward.pool.warm_up()
    print(f"rewardsmith worker start: {time.perf_counter() - start:.1f} s for {reward.pool.workers} workers (once)")
    open_r1_accuracy(_box("1"), "1")
    math_verify_accuracy(_box("x^2"), "x^2")

    # rewardsmith, throughput: batched like a trainer step.
    start = time.perf_counter()
    results = []
    for i in range(0, len(pairs), args.batch):
        chunk = pairs[i : i + args.batch]
        results.extend(reward.details([p.completion for p in chunk], solution=[p.gold for p in chunk]))
    ours_s = time.perf_counter() - start
    ours = [r.score for r in results]
    symbolic = sum("sympy" in r.reason or "timeout" in r.reason for r in results)
    print(f"rewardsmith decided {len(results) - symbolic} pairs in-process and {symbolic} with sympy workers")
    # rewardsmith, latency: one completion per call, a fresh reward (empty caches) on warm workers.
    single = MathEquivalence(workers=args.workers)
    single.pool.warm_up()
    ours_lat = []
    for p in pairs:
        t = time.perf_counter()
        single([p.completion], solution=[p.gold])
        ours_lat.append(time.perf_counter() - t)
    reward.close()
    single.close()

    mv, mv_lat, mv_s = _run_baseline(math_verify_accuracy, pairs)
    r1, r1_lat, r1_s = _run_baseline(open_r1_accuracy, pairs)

    n = len(pairs)
    print(f"\n{'':28}{'completions/s':>14}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}{'accuracy':>10}")
    for name, seconds, lat, scores in (
        ("rewardsmith", ours_s, ours_lat, ours),
        ("math-verify (gold in $…$)", mv_s, mv_lat, mv),
        ("open-r1 math-verify", r1_s, r1_lat, r1),
    ):
        accuracy = sum(s == p.expected for s, p in zip(scores, pairs, strict=True)) / n
        print(
            f"{name:28}{n / seconds:14.1f}{1000 * statistics.median(lat):10.2f}"
            f"{1000 * _percentile(lat, 0.99):10.2f}{1000 * max(lat):10.1f}{accuracy:10.1%}"
        )
    print(
        f"\nthroughput ratio vs math-verify (gold in $…$): {mv_s / ours_s:.1f}x; "
        f"vs open-r1's config: {r1_s / ours_s:.1f}x"
    )
    # Per pair: first occurrences only, so neither side's caches (rewardsmith's verdicts, math-verify's parses) hide
    # the cost of a pair seen for the first time.
    firsts = list({(p.gold, p.completion): i for i, p in reversed(list(enumerate(pairs)))}.values())
    ratios = {i: ours_lat[i] / max(mv_lat[i], 1e-6) for i in firsts}
    extra = [ours_lat[i] - mv_lat[i] for i in firsts]
    worst = max(firsts, key=lambda i: ratios[i])
    print(
        f"per-pair latency ratio rewardsmith/math-verify over {len(firsts)} distinct pairs: median "
        f"{statistics.median(ratios.values()):.2f}, p99 {_percentile(list(ratios.values()), 0.99):.2f}, "
        f"slowest pair {ratios[worst]:.2f} "
        f"({1000 * ours_lat[worst]:.1f} ms vs {1000 * mv_lat[worst]:.1f} ms); "
        f"most time over math-verify on one pair: {1000 * max(extra):.1f} ms"
    )
    print("slowest pairs for rewardsmith (ms rewardsmith / ms math-verify):")
    for i in sorted(firsts, key=lambda i: -ours_lat[i])[: min(args.show, 5)]:
        print(
            f"  {1000 * ours_lat[i]:8.1f} / {1000 * mv_lat[i]:8.1f}  "
            f"gold={pairs[i].gold!r:28} {pairs[i].completion[-45:]!r}"
        )

    for base_name, base in (("math-verify (gold in $…$)", mv), ("open-r1 math-verify", r1)):
        disagreements = [(p, o, b) for p, o, b in zip(pairs, ours, base, strict=True) if o != b]
        ours_right = sum(o == p.expected for p, o, _ in disagreements)
        base_right = sum(b == p.expected for p, _, b in disagreements)
        print(
            f"\ndisagreements with {base_name}: {len(disagreements)}; rewardsmith right on {ours_right}, "
            f"baseline right on {base_right}"
        )
        by_kind: dict[tuple[str, str], int] = {}
        for p, o, b in disagreements:
            key = (p.category, f"expected {p.expected} rewardsmith {o} baseline {b}")
            by_kind[key] = by_kind.get(key, 0) + 1
        for (category, what), count in sorted(by_kind.items(), key=lambda kv: -kv[1])[: args.show]:
            print(f"  {count:4d} x {category:18} {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
