"""Benchmark: rewardsmith's ``math_equivalence`` against math-verify at equal cores, same run, same pairs.

At each core count N (``--cores 1,2,4,16``) both sides get N processes: rewardsmith with ``workers=N`` (the whole
pipeline, extraction to sympy, runs in its workers), math-verify in a fork pool of N processes, each running
``verify(parse(f"${gold}$"), parse(completion))`` per pair (math-verify configured correctly: the gold wrapped in
``$…$``, default extraction on both sides), which is what a user of math-verify does with N cores. Both score the
same pairs in the same batches (``--batch``, a trainer step). Workloads (``--workload``, several comma-separated),
each GRPO-shaped (one gold scored against ``--generations`` completions), each pair carrying the verdict it should
get:

- ``mixed``: integers, fractions, expressions, intervals, sets, tuples and completions with no answer;
- ``hard`` (symbolic-only): only pairs that need the symbolic stage (factorisations, pi, radicals, logs, trig),
  right and wrong;
- ``math500``: answer types drawn in proportions chosen to resemble MATH-500's golds (about half integers,
  then fractions, radicals, expressions, tuples, intervals, text/choices; an approximation, not measured on
  the dataset), written the way MATH writes them (``10,\\!000``, ``\\$``, ``^\\circ``, ``\\dfrac``).

Prints, per workload and N: completions/s of each side, their ratio and each side's accuracy; then rewardsmith's
scaling from the smallest to the largest N and where its verdicts and math-verify's differ (with
``--open-r1``, also against open-r1's ``accuracy_reward`` configuration). ``--latency`` adds the per-pair latency
ratio (one completion per call, warm workers, against one math-verify call on the same pair).

    python bench/math_reward.py --cores 1,2,4,16 --workload mixed,hard       # the equal-cores table
    python bench/math_reward.py --workload math500 --pairs 400 --cores 2
    python bench/math_reward.py --quick                                       # seconds: a smoke run (CI)

``--towers`` adds ``\\boxed{10^{10^{10}}}`` completions: in a pool process math-verify's 5 s SIGALRM timeout
stops each (off the main thread, as in TRL, that alarm is off and the power runs for minutes); rewardsmith
settles it by size without evaluating it.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import os
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


def _batches(pairs: list[Pair], batch: int) -> list[list[Pair]]:
    return [pairs[i : i + batch] for i in range(0, len(pairs), batch)]


def _quiet() -> None:
    logging.disable(logging.WARNING)  # math-verify logs every timeout and parse failure


def _score_pair(args: tuple[str, str, str]) -> float | None:
    """One pair in a math-verify pool process: ``math_verify_accuracy`` or ``open_r1_accuracy``."""
    kind, completion, gold = args
    return (open_r1_accuracy if kind == "open-r1" else math_verify_accuracy)(completion, gold)


def run_math_verify_pool(
    pairs: list[Pair], cores: int, batch: int, kind: str = "math-verify"
) -> tuple[list[float | None], float]:
    """math-verify in a fork pool of ``cores`` processes, batch by batch; scores and seconds (pool start excluded:
    the processes fork from this one, where math-verify is already imported and warm)."""
    math_verify_accuracy(_box("x^2"), "x^2")
    open_r1_accuracy(_box("1"), "1")
    with multiprocessing.get_context("fork").Pool(cores, initializer=_quiet) as pool:
        pool.map(_score_pair, [(kind, _box("1"), "1")] * (4 * cores), chunksize=1)  # every process up
        scores: list[float | None] = []
        start = time.perf_counter()
        for chunk in _batches(pairs, batch):
            scores.extend(pool.map(_score_pair, [(kind, p.completion, p.gold) for p in chunk]))
        return scores, time.perf_counter() - start


def run_rewardsmith(pairs: list[Pair], cores: int, batch: int) -> tuple[list[float | None], float, float, list[str]]:
    """``math_equivalence`` with ``workers=cores``, batch by batch; scores, seconds, worker start (once) and reasons."""
    from rewardsmith.rewards.math.reward import MathEquivalence

    reward = MathEquivalence(workers=cores)
    try:
        start = time.perf_counter()
        reward.warm_up()
        started = time.perf_counter() - start
        results = []
        start = time.perf_counter()
        for chunk in _batches(pairs, batch):
            results.extend(reward.details([p.completion for p in chunk], solution=[p.gold for p in chunk]))
        seconds = time.perf_counter() - start
    finally:
        reward.close()
    return [r.score for r in results], seconds, started, [r.reason for r in results]


def _accuracy(scores: list[float | None], pairs: list[Pair]) -> float:
    return sum(s == p.expected for s, p in zip(scores, pairs, strict=True)) / len(pairs)


def equal_cores(pairs: list[Pair], cores: list[int], batch: int) -> dict[int, dict[str, object]]:
    """Both sides at each core count; prints one row per count as it is measured."""
    print(f"{'cores':>5}{'rewardsmith/s':>15}{'math-verify pool/s':>20}{'ratio':>8}{'accuracy':>18}{'start':>9}")
    rows: dict[int, dict[str, object]] = {}
    for n in cores:
        mv, mv_s = run_math_verify_pool(pairs, n, batch)
        ours, ours_s, started, reasons = run_rewardsmith(pairs, n, batch)
        ours_rate, mv_rate = len(pairs) / ours_s, len(pairs) / mv_s
        rows[n] = {"ours": ours, "mv": mv, "ours_rate": ours_rate, "mv_rate": mv_rate, "reasons": reasons}
        accuracy = f"{_accuracy(ours, pairs):.1%} / {_accuracy(mv, pairs):.1%}"
        print(f"{n:5d}{ours_rate:15.1f}{mv_rate:20.1f}{ours_rate / mv_rate:7.2f}x{accuracy:>18}{started:8.1f}s")
    return rows


def latency(pairs: list[Pair], show: int) -> None:
    """Per pair, first occurrences only (so neither side's caches hide a pair's first cost): one completion per call
    on warm workers against one math-verify call in this process."""
    from rewardsmith.rewards.math.reward import MathEquivalence

    single = MathEquivalence(workers=1)
    single.warm_up()
    firsts = list({(p.gold, p.completion): i for i, p in reversed(list(enumerate(pairs)))}.values())
    ours_lat, mv_lat = {}, {}
    try:
        for i in firsts:
            t = time.perf_counter()
            single([pairs[i].completion], solution=[pairs[i].gold])
            ours_lat[i] = time.perf_counter() - t
            t = time.perf_counter()
            math_verify_accuracy(pairs[i].completion, pairs[i].gold)
            mv_lat[i] = time.perf_counter() - t
    finally:
        single.close()
    ratios = {i: ours_lat[i] / max(mv_lat[i], 1e-6) for i in firsts}
    extra = [ours_lat[i] - mv_lat[i] for i in firsts]
    worst = max(firsts, key=lambda i: ratios[i])
    print(
        f"per-pair latency ratio rewardsmith/math-verify over {len(firsts)} distinct pairs: median "
        f"{statistics.median(ratios.values()):.2f}, p99 {_percentile(list(ratios.values()), 0.99):.2f}, "
        f"slowest pair {ratios[worst]:.2f} ({1000 * ours_lat[worst]:.1f} ms vs {1000 * mv_lat[worst]:.1f} ms); "
        f"most time over math-verify on one pair: {1000 * max(extra):.1f} ms"
    )
    for i in sorted(firsts, key=lambda i: -ours_lat[i])[: min(show, 5)]:
        print(
            f"  {1000 * ours_lat[i]:8.1f} / {1000 * mv_lat[i]:8.1f} ms  "
            f"gold={pairs[i].gold!r:28} {pairs[i].completion[-45:]!r}"
        )


def disagreements(pairs: list[Pair], ours: list[float | None], base: list[float | None], name: str, show: int) -> None:
    found = [(p, o, b) for p, o, b in zip(pairs, ours, base, strict=True) if o != b]
    ours_right = sum(o == p.expected for p, o, _ in found)
    base_right = sum(b == p.expected for p, _, b in found)
    print(f"disagreements with {name}: {len(found)}; rewardsmith right on {ours_right}, {name} right on {base_right}")
    by_kind: dict[tuple[str, str], int] = {}
    for p, o, b in found:
        key = (p.category, f"expected {p.expected} rewardsmith {o} {name} {b}")
        by_kind[key] = by_kind.get(key, 0) + 1
    for (category, what), count in sorted(by_kind.items(), key=lambda kv: -kv[1])[:show]:
        print(f"  {count:4d} x {category:18} {what}")


def _own_worker_budget(cores: int) -> None:
    """A host worker budget of the bench's own, room for ``cores`` workers and the spare: neither a budget declared
    on this host nor other reward processes drawing on it can leave rewardsmith fewer cores than math-verify."""
    import tempfile

    os.environ["REWARDSMITH_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="rewardsmith-bench-")
    os.environ["REWARDSMITH_MATH_WORKERS"] = str(cores + 1)


def _cores(text: str) -> list[int]:
    values = sorted({int(v) for v in text.split(",") if v.strip()})
    if not values or values[0] < 1:
        raise argparse.ArgumentTypeError(f"--cores wants counts >= 1, got {text!r}")
    return values


def _default_cores() -> str:
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    counts = [n for n in (1, 2, 4, 8, 16, 32, 64) if n < available] + [available]
    return ",".join(map(str, counts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--workload", default="mixed,hard", help=f"comma-separated, of: {', '.join(sorted(WORKLOADS))}")
    parser.add_argument("--cores", type=_cores, default=None, help="core counts, e.g. 1,2,4,16 (default: 1, 2, 4, ...)")
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--generations", type=int, default=8, help="completions per gold (GRPO num_generations)")
    parser.add_argument("--batch", type=int, default=512, help="completions per reward call (a trainer step)")
    parser.add_argument("--towers", type=int, default=0, help="exponent-tower completions to add")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=10, help="disagreement kinds and slowest pairs to print")
    parser.add_argument("--open-r1", action="store_true", help="also compare verdicts with open-r1's configuration")
    parser.add_argument("--latency", action="store_true", help="also the per-pair latency ratio (one core each)")
    parser.add_argument("--quick", action="store_true", help="a smoke run in seconds: 64 pairs, 1 core, mixed")
    args = parser.parse_args(argv)
    if args.quick:
        args.pairs, args.batch, args.workload = 64, 32, "mixed"
        args.cores = args.cores or [1]
    cores = args.cores or _cores(_default_cores())
    kinds = [k.strip() for k in args.workload.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in WORKLOADS]
    if unknown or not kinds:
        parser.error(f"unknown workload {unknown}; choose from {sorted(WORKLOADS)}")
    _quiet()
    _own_worker_budget(max(cores))

    for kind in kinds:
        pairs = workload(args.pairs, args.generations, args.towers, args.seed, kind)
        counts: dict[str, int] = {}
        for p in pairs:
            counts[p.category] = counts.get(p.category, 0) + 1
        label = f"{kind} (symbolic-only)" if kind == "hard" else kind
        print(
            f"\nworkload {label}: {len(pairs)} pairs, {args.generations} per gold, batches of {args.batch}: "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        )
        rows = equal_cores(pairs, cores, args.batch)
        low, high = rows[cores[0]], rows[cores[-1]]
        print(
            f"rewardsmith {cores[0]} -> {cores[-1]} workers: {high['ours_rate'] / low['ours_rate']:.2f}x completions/s "
            f"(math-verify pool {cores[0]} -> {cores[-1]}: {high['mv_rate'] / low['mv_rate']:.2f}x)"
        )
        verdicts = {tuple(row["ours"]) for row in rows.values()}  # type: ignore[call-overload]
        if len(verdicts) > 1:
            print("NOTE: rewardsmith's verdicts differ between core counts (timeouts under load?)")
        ours = high["ours"]
        symbolic = sum("sympy" in r or "timeout" in r for r in high["reasons"])  # type: ignore[union-attr]
        print(f"rewardsmith settled {len(pairs) - symbolic} pairs on the fast paths and {symbolic} with sympy")
        disagreements(pairs, ours, high["mv"], "math-verify", args.show)  # type: ignore[arg-type]
        if args.open_r1:
            r1, _ = run_math_verify_pool(pairs, cores[-1], args.batch, kind="open-r1")
            disagreements(pairs, ours, r1, "open-r1", args.show)  # type: ignore[arg-type]
        if args.latency:
            latency(pairs, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
