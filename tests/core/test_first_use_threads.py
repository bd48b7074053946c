"""First use from many threads at once, in fresh processes: every lazy start happens once and every score is right.

Trainers reach rewardsmith from thread pools (verl's reward worker runs the sync ``compute_score`` in one), so the
first batch of a fresh worker process is the moment several threads hit every lazy initialisation together: the
registry's imports and entry points, the verl adapter's scorer cache and route rewards, the math reward's
hard-timeout worker pool. Each trial is a new interpreter (``python this_file.py SCENARIO``) whose 16 threads
start behind one barrier; the parent checks each thread's verdicts and what got built.

A plugin entry point whose import is slow widens the window in which a thread could see the registry marked
loaded before its imports finished (the ``unknown reward`` failure), so that race shows on every trial.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

THREADS = 16
TRIALS = 4

# (data_source, response, ground_truth, expected score, expected unscorable): verl's call shape, default routes.
VERL_TABLE = [
    ("openai/gsm8k", "Natalia sold 48 + 24 clips. #### 72", "72", 1.0, False),
    ("openai/gsm8k", "So the answer is \\boxed{71}.", "72", 0.0, False),
    ("lighteval/MATH", "<think>half</think> \\boxed{\\dfrac12}", "\\frac{1}{2}", 1.0, False),
    ("aime24", "\\boxed{8}", "2^{3}", 1.0, False),
    ("lighteval/MATH", "\\boxed{(x-1)(x+1)}", "x^2-1", 1.0, False),  # symbolic: the math worker pool's first call
    ("lighteval/MATH", "\\boxed{(x+1)^2}", "x^2-1", 0.0, False),
    ("openai/gsm8k", "The answer is 72", None, 0.0, True),  # no gold: unscorable, not wrong
    ("my_private_set", "\\boxed{72}", "72", 0.0, True),  # no route
]

SLOW_PLUGIN = """
import time

time.sleep(0.5)  # a plugin whose import takes a while: other threads arrive while the registry loads

from rewardsmith import Reward, RewardResult


class Shout(Reward):
    name = "shout"

    def score_one(self, completion, row):
        return RewardResult(score=float(completion.isupper()), reason="")
"""


def _install_slow_plugin(directory: Path) -> None:
    (directory / "rk_slow_plugin.py").write_text(SLOW_PLUGIN)
    dist = directory / "rk_slow_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rk-slow-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rewardsmith.rewards]\nshout = rk_slow_plugin:Shout\n")


def _run_trial(scenario: str, tmp_path: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path(__file__).parents[2])])}
    proc = subprocess.run(
        [sys.executable, __file__, scenario],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, f"trial process failed:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(TRIALS))
def test_registry_first_use_from_16_threads(trial, tmp_path):
    _install_slow_plugin(tmp_path)
    report = _run_trial("registry", tmp_path)
    assert report["errors"] == [], report["errors"]
    for names in report["listed"]:  # every thread saw the complete registry, the plugin included
        assert names == report["final"]
    assert {"shout", "math_equivalence", "think_format"} <= set(report["final"])
    assert report["scores"] == [[1.0, 0.0]] * THREADS


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(TRIALS))
def test_verl_compute_score_first_batch_from_16_threads(trial, tmp_path):
    _install_slow_plugin(tmp_path)
    report = _run_trial("verl", tmp_path)
    assert report["errors"] == [], report["errors"]
    for i, result in enumerate(report["results"]):
        _, _, _, score, unscorable = VERL_TABLE[i % len(VERL_TABLE)]
        assert result == {"score": score, "unscorable": unscorable}, (i, result)
    assert report["scorers"] == 1, "one scorer for one mapping, however many threads asked first"
    assert report["math_rewards"] == 1, "the math route's reward (and its worker pool) built once"


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(2))
def test_hard_timeout_pool_first_call_from_16_threads(trial, tmp_path):
    report = _run_trial("pool", tmp_path)
    assert report["errors"] == [], report["errors"]
    assert report["values"] == [2**i for i in range(THREADS)]
    assert report["generations"] == 1, "one set of workers, however many threads started the pool"
    assert report["live"] == report["target"], "no worker started twice over the pool's target"


# -- the trial process ---------------------------------------------------------------------------------------
def _in_threads(work: Any) -> tuple[list[Any], list[str]]:
    """Run ``work(i)`` in THREADS threads released together; results by index and every exception as text."""
    barrier = threading.Barrier(THREADS)
    results: list[Any] = [None] * THREADS
    errors: list[str] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except Exception as exc:
            errors.append(f"thread {i}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


def _trial_registry() -> dict[str, Any]:
    import rewardsmith

    def work(i: int) -> Any:
        names = rewardsmith.list_rewards() if i % 2 else None
        reward = rewardsmith.get_reward("shout" if i % 2 else "math_equivalence")
        if i % 2 == 0:
            names = rewardsmith.list_rewards()
            scores = reward(["\\boxed{4}", "\\boxed{5}"], solution=["4", "4"])
        else:
            scores = reward(["HEY", "hey"])
        return names, scores

    results, errors = _in_threads(work)
    return {
        "errors": errors,
        "listed": [r[0] for r in results if r],
        "scores": [r[1] for r in results if r],
        "final": rewardsmith.list_rewards(),
    }


def _trial_verl() -> dict[str, Any]:
    from rewardsmith.adapters.trainers import verl

    def work(i: int) -> Any:
        source, response, gold, _, _ = VERL_TABLE[i % len(VERL_TABLE)]
        return verl.compute_score(data_source=source, solution_str=response, ground_truth=gold, extra_info={})

    results, errors = _in_threads(work)
    scorers = list(verl._SCORERS._scorers.values())
    math_rewards = {id(r) for s in scorers for r in s.built_rewards() if r.name == "math_equivalence"}
    for scorer in scorers:
        for reward in scorer.built_rewards():
            reward.close()
    return {"errors": errors, "results": results, "scorers": len(scorers), "math_rewards": len(math_rewards)}


def _trial_pool() -> dict[str, Any]:
    import time

    from rewardsmith import hard_timeout

    generations: list[Any] = []
    original = hard_timeout._Workers.__init__

    def counting_init(self: Any, *args: Any, **kwargs: Any) -> None:
        generations.append(self)
        original(self, *args, **kwargs)

    hard_timeout._Workers.__init__ = counting_init  # type: ignore[method-assign]
    pool = hard_timeout.HardTimeoutPool(workers=2, timeout_s=120.0)

    def work(i: int) -> Any:
        outcome = pool.call(pow, 2, i)
        if not outcome.ok:
            raise RuntimeError(f"{outcome.status.value}: {outcome.error}")
        return outcome.value

    values, errors = _in_threads(work)
    generation = pool._ensure_generation()
    deadline = time.monotonic() + 60
    while generation.starting and time.monotonic() < deadline:  # let the background top-up settle
        time.sleep(0.05)
    live, target = len(generation.live), generation.target
    pool.close()
    return {"errors": errors, "values": values, "generations": len(generations), "live": live, "target": target}


if __name__ == "__main__":
    scenario = sys.argv[1]
    trial = {"registry": _trial_registry, "verl": _trial_verl, "pool": _trial_pool}[scenario]
    print(json.dumps(trial()))
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: what is being tested is done
