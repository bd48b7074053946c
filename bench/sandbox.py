"""Sandbox throughput: 200 solutions x 5 call tests, 2 workers, one process per test.

Compares, in one run:

- ``rewardkit local``: the ``code_tests`` reward end to end (harness, bubblewrap forkserver, parent-side
  verdicts) with the local backend;
- ``rewardkit docker``: the same with the docker backend, when ``rewardkit.sandboxes.docker.backend.DockerSandbox``
  imports and an engine answers (otherwise the reason it was skipped is printed);
- ``bare subprocess``: ``subprocess.run([python, "-c", program])`` per test with no isolation at all, where
  ``program`` is the solution plus the call and a print of the result (less work than the real harness).

Usage: ``python bench/sandbox.py [--solutions 200] [--tests 5] [--workers 2]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from rewardkit import get_reward

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
        from rewardkit.sandboxes.docker.backend import DockerSandbox
    except Exception as exc:
        return f"rewardkit.sandboxes.docker.backend.DockerSandbox not importable ({type(exc).__name__}: {exc})"
    try:
        from rewardkit.sandboxes.base import RunRequest

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solutions", type=int, default=200)
    parser.add_argument("--tests", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    completions, tests = make_dataset(args.solutions, args.tests)
    executions = args.solutions * args.tests
    rows: list[tuple[str, float]] = []

    seconds, _ = bench_bare(completions, tests, args.workers)
    rows.append(("bare subprocess (no isolation)", seconds))
    seconds, scores = bench_reward("local", completions, tests, args.workers)
    rows.append(("rewardkit local (bwrap forkserver)", seconds))
    expected_mean = (3 * 1.0 + 1 / args.tests) / 4  # three right solutions; sum(range(n)) is right only at n=0
    mean = sum(s or 0.0 for s in scores) / len(scores)
    print(f"local mean score {mean:.3f} (expected {expected_mean:.3f}); None: {sum(s is None for s in scores)}")
    reason = docker_unavailable_reason()
    if reason is None:
        seconds, _ = bench_reward("docker", completions, tests, args.workers)
        rows.append(("rewardkit docker", seconds))
    else:
        print(f"rewardkit docker: skipped: {reason}")

    bare = rows[0][1]
    print(f"\n{args.solutions} solutions x {args.tests} tests = {executions} executions, {args.workers} workers")
    print(f"{'mode':38s} {'seconds':>8s} {'exec/s':>8s} {'vs bare':>8s}")
    for name, seconds in rows:
        print(f"{name:38s} {seconds:8.2f} {executions / seconds:8.1f} {bare / seconds:7.2f}x")


if __name__ == "__main__":
    main()
