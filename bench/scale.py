"""Scale-out benchmark: completions/s of ``math_equivalence`` and ``code_tests`` in-process, through
``rewardsmith serve``, and on a Ray pool of 1, 2 and 4 actors; the per-item overhead of each path; and a projection
of what N nodes deliver, set against verl's published figures for math-verify on a Ray pool (about 3 s for 2,048
and 30 s for 16,384 scorings).

Every path scores the same completions with the same reward config, one worker per CPU it holds (math
``workers: 1``, code ``concurrency: 1``), so the in-process run gives the per-item cost of the work itself and each
other path adds only its own overhead. That overhead is measured twice: as the slowdown on the real rewards, and
directly, on ``think_format`` (microseconds of work per item), where nearly all the time is the path. Each path
runs ``--repeat`` times and the fastest run counts, and the in-process baseline runs both before Ray starts and
after: on a shared machine other work disturbs some runs, and a negative overhead means "within that noise".

    python bench/scale.py                               # 512 math, 64 code solutions x 3 tests
    python bench/scale.py --math 1024 --code 128 --actors 1,2,4,8
    python bench/scale.py --cores-per-node 32 --nodes 1,2,4,8,16

The Ray columns use a local single-node cluster with ``--ray-cpus`` logical CPUs (so 4 actors fit on a smaller
machine; on fewer physical cores they share them and the ratios show it). Ray and the server talk over loopback
only: when ``unshare`` is permitted, the benchmark re-runs itself in a private network namespace (only ``lo``
exists there) because Ray otherwise binds the machine's outward interface; ``--no-netns`` skips that.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NETNS_FLAG = "REWARDSMITH_BENCH_NETNS"
#: Ray's session files go to a private, short directory (its socket paths must stay short) that the parent removes.
TEMP_DIR_ENV = "REWARDSMITH_BENCH_RAY_TMP"
#: verl PR #1206: math-verify scorings on a Ray reward pool (batch size, seconds).
VERL_PUBLISHED = ((2048, 3.0), (16384, 30.0))

SOLUTIONS = [
    "def solve(n):\n    return sum(i * i for i in range(n))\n",
    "def solve(n):\n    return n * (n - 1) * (2 * n - 1) // 6\n",
    "def solve(n):\n    return sum(range(n))\n",  # wrong
]


@dataclass
class Workload:
    name: str
    spec: dict[str, Any]
    completions: list[str]
    columns: dict[str, list[Any]]
    warm_completions: list[str]  # scored untimed first on every path: workers, sandboxes, imports
    warm_columns: dict[str, list[Any]]


@dataclass
class Row:
    """One path's measurement on one workload."""

    path: str
    seconds: float | None = None
    n: int = 0
    note: str = ""
    scores: list[float | None] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        return self.n / self.seconds if self.seconds else None


# -- workloads ------------------------------------------------------------------------------------------
def math_workload(n: int, kind: str, seed: int = 0) -> Workload:
    sys.path.insert(0, str(Path(__file__).parent))
    from math_reward import workload

    pairs = workload(n, 8, 0, seed=seed, kind=kind)
    warm = workload(32, 1, 0, seed=seed + 1, kind=kind)
    return Workload(
        "math_equivalence",
        # no verdict cache: GRPO-shaped batches repeat completions, and every path should do the same work
        {"name": "math_equivalence", "config": {"workers": 1, "timeout_s": 5, "cache_size": 0}},
        [p.completion for p in pairs],
        {"solution": [p.gold for p in pairs]},
        [p.completion for p in warm],
        {"solution": [p.gold for p in warm]},
    )


def code_workload(n: int, tests: int) -> Workload:
    suite = {
        "language": "python",
        "fn_name": "solve",
        "calls": [{"args": [k * 7], "expected": sum(i * i for i in range(k * 7))} for k in range(tests)],
    }
    completions = [f"```python\n{SOLUTIONS[i % len(SOLUTIONS)]}```" for i in range(n)]
    return Workload(
        "code_tests",
        {"name": "code_tests", "config": {"concurrency": 1, "timeout_s": 5}},
        completions,
        {"tests": [suite] * n},
        completions[:16],
        {"tests": [suite] * min(n, 16)},
    )


def trivial_workload(n: int) -> Workload:
    completions = ["<think>a</think> b"] * n
    return Workload("think_format", {"name": "think_format"}, completions, {}, completions[:16], {})


# -- paths -----------------------------------------------------------------------------------------------
def timed(score: Any, work: Workload, repeat: int) -> tuple[float, list[float | None]]:
    """Fastest of ``repeat`` runs (the machine may be shared: the fastest is the least disturbed) and its scores."""
    best, scores = float("inf"), []
    for _ in range(repeat):
        started = time.perf_counter()
        scores = score(work.completions, **work.columns)
        best = min(best, time.perf_counter() - started)
    return best, scores


def run_in_process(work: Workload, repeat: int) -> Row:
    from rewardsmith.compose import build_reward

    reward = build_reward(work.spec)
    try:
        reward(work.warm_completions, **work.warm_columns)
        seconds, scores = timed(reward, work, repeat)
        return Row("in-process", seconds, len(scores), scores=scores)
    finally:
        close = getattr(reward, "close", None)
        if callable(close):
            close()


def run_served(work: Workload, clients: int, request_size: int, repeat: int) -> Row:
    """``rewardsmith serve`` in a subprocess; ``clients`` threads post ``request_size`` samples per request."""
    try:
        import rewardsmith.adapters.runtime.serve  # noqa: F401
    except ImportError as exc:
        return Row("rewardsmith serve", note=f"skipped: the server is not importable ({exc})")
    spec_dir = Path(tempfile.mkdtemp(prefix="rk-scale-"))
    spec = spec_dir / "spec.yaml"
    spec.write_text(json.dumps(work.spec))  # JSON is YAML
    argv = [sys.executable, "-m", "rewardsmith", "serve", "--spec", str(spec), "--host", "127.0.0.1", "--port", "0",
            "--workers", str(clients), "--threads", str(clients), "--chunk-size", "16"]  # fmt: skip
    log = (spec_dir / "server.log").open("w")
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, text=True, cwd=ROOT)
    try:
        url = _ready_url(server, spec_dir / "server.log")
        _wait_healthy(url)
        name = work.spec["name"]
        warm = {"reward": name, "completions": work.warm_completions, "columns": work.warm_columns}
        _post(url + "/v1/score", warm)
        seconds, scores = timed(lambda *_, **__: _score_served(url, work, clients, request_size), work, repeat)
        return Row("rewardsmith serve", seconds, len(scores), scores=scores)
    except Exception as exc:
        return Row("rewardsmith serve", note=f"failed: {type(exc).__name__}: {exc}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        shutil.rmtree(spec_dir, ignore_errors=True)


def _score_served(url: str, work: Workload, clients: int, request_size: int) -> list[float | None]:
    name = work.spec["name"]
    n = len(work.completions)
    batches = [(start, min(n, start + request_size)) for start in range(0, n, request_size)]
    scores: list[float | None] = [None] * n
    lock = threading.Lock()

    def client() -> None:
        while True:
            with lock:
                if not batches:
                    return
                start, stop = batches.pop(0)
            scores[start:stop] = _post(url + "/v1/score", _request(work, name, start, stop))["scores"]

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return scores


def run_on_ray(work: Workload, actors: int, repeat: int) -> Row:
    from rewardsmith.ray import RayPool

    path = f"ray, {actors} actor{'s' if actors > 1 else ''}"
    pool = RayPool({"reward": work.spec, "num_actors": actors, "actor_num_cpus": 1})
    try:
        ready = pool.warm_up()
        if len(ready) < actors:
            return Row(path, note=f"skipped: only {len(ready)} of {actors} actors started")
        pool(work.warm_completions, **work.warm_columns)  # reaches every actor: about four chunks each
        seconds, scores = timed(pool, work, repeat)
        return Row(path, seconds, len(scores), scores=scores)
    finally:
        pool.close()


def math_verify_cost(work: Workload) -> float:
    """Seconds per pair of plain math-verify (``verify(parse(gold), parse(answer))``), sequential, main thread:
    the work a verl reward pool runs per math sample."""
    sys.path.insert(0, str(Path(__file__).parent))
    from math_reward import math_verify_accuracy

    pairs = list(zip(work.completions, work.columns["solution"], strict=True))
    for completion, gold in pairs[:8]:
        math_verify_accuracy(completion, gold)  # imports and first-use caches
    started = time.perf_counter()
    for completion, gold in pairs:
        math_verify_accuracy(completion, gold)
    return (time.perf_counter() - started) / len(pairs)


def ray_batch_latency() -> float:
    """Seconds for a one-sample batch through a warm one-actor pool: the fixed cost of a batch on Ray."""
    from rewardsmith.ray import RayPool

    pool = RayPool({"reward": "think_format", "num_actors": 1, "actor_num_cpus": 1})
    try:
        pool.warm_up()
        pool(["x"])
        times = []
        for _ in range(20):
            started = time.perf_counter()
            pool(["<think>a</think> b"])
            times.append(time.perf_counter() - started)
        return sorted(times)[len(times) // 2]
    finally:
        pool.close()


# -- report ----------------------------------------------------------------------------------------------
def report(work: Workload, rows: list[Row]) -> None:
    base = rows[0]
    print(f"\n{work.name}: {len(work.completions)} completions")
    print(f"  {'path':<18} {'seconds':>8} {'compl/s':>9} {'x in-proc':>10} {'per item':>10} {'overhead/item':>14}")
    for row in rows:
        if row.seconds is None:
            print(f"  {row.path:<18} {row.note}")
            continue
        per_item = row.seconds / row.n
        ratio = row.rate / base.rate if base.rate else float("nan")
        overhead = per_item - base.seconds / base.n if row is not base else 0.0  # < 0: within the noise
        agree = "" if row is base or row.scores == base.scores else "  (scores differ from in-process!)"
        print(f"  {row.path:<18} {row.seconds:>8.2f} {row.rate:>9.1f} {ratio:>9.2f}x {per_item * 1e3:>8.2f}ms"
              f" {overhead * 1e3:>12.2f}ms{agree}")  # fmt: skip


def projection(costs: dict[str, float], overhead_s: float, latency_s: float, cores: int, nodes: list[int]) -> None:
    """T(B) = latency + B * (overhead + cost / (nodes * cores)): the work divides over the actors, the driver's
    per-item share (serialising chunks, collecting results) does not, so it caps what any number of nodes give."""
    print(
        f"\nprojection: T(B) = {latency_s * 1e3:.1f} ms + B x ({overhead_s * 1e3:.3f} ms + cost / actors); "
        f"{cores} CPUs (one actor each) per node; the overhead is serial, in the driver"
    )
    for label, cost_s in costs.items():
        print(f"  {label}: cost {cost_s * 1e3:.2f} ms per item on one CPU")
        heads = " ".join(f"{f'{b:,} in':>10}" for b, _ in VERL_PUBLISHED)
        print(f"    {'nodes':>5} {'actors':>6} {'compl/s':>9} {heads}")
        for n in nodes:
            actors = n * cores
            per_item = overhead_s + cost_s / actors
            cells = " ".join(f"{latency_s + b * per_item:>9.2f}s" for b, _ in VERL_PUBLISHED)
            print(f"    {n:>5} {actors:>6} {1 / per_item:>9,.0f} {cells}")
        for batch, seconds in VERL_PUBLISHED:
            budget = (seconds - latency_s) / batch - overhead_s
            need = cost_s / budget if budget > 0 else float("inf")
            print(f"    verl's {batch:,} in ~{seconds:g} s needs about {need:.1f} actor CPUs at this cost")
    ceiling = 1 / overhead_s if overhead_s > 0 else float("inf")
    print(f"  driver ceiling (overhead alone, any number of nodes): {ceiling:,.0f} completions/s")


# -- plumbing --------------------------------------------------------------------------------------------
def _request(work: Workload, name: str, start: int, stop: int) -> dict[str, Any]:
    columns = {k: v[start:stop] for k, v in work.columns.items()}
    return {"reward": name, "completions": work.completions[start:stop], "columns": columns}


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def _ready_url(server: subprocess.Popen, log: Path) -> str:
    deadline = time.monotonic() + 120
    assert server.stdout is not None
    while time.monotonic() < deadline:
        line = server.stdout.readline()
        if not line:
            raise RuntimeError(f"server exited: {log.read_text()[-2000:]}")
        if "ready on " in line:
            return line.split("ready on ", 1)[1].split()[0].rstrip("/")
    raise RuntimeError("server not ready within 120 s")


def start_ray(cpus: int) -> str | None:
    """A local single-node Ray cluster with ``cpus`` logical CPUs; the reason when there is none."""
    try:
        import ray

        loopback = {"_node_ip_address": "127.0.0.1"} if os.environ.get(NETNS_FLAG) == "1" else {}
        temp_dir = os.environ.get(TEMP_DIR_ENV) or tempfile.mkdtemp(prefix="rkbench-", dir="/tmp")
        if not os.environ.get(TEMP_DIR_ENV):
            atexit.register(shutil.rmtree, temp_dir, ignore_errors=True)
        ray.init(num_cpus=cpus, include_dashboard=False, object_store_memory=100_000_000, log_to_driver=False,
                 _temp_dir=temp_dir, **loopback)  # fmt: skip
        time.sleep(5)  # let the node's prestarted workers settle before anything is timed
    except Exception as exc:
        return f"skipped: Ray unavailable ({type(exc).__name__}: {exc})"
    return None


def _wait_healthy(url: str, timeout_s: float = 60) -> None:
    """Until ``GET /healthz`` answers: the ready line can come before the socket accepts connections."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _loopback_up() -> None:
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(sock, 0x8913, request))[1]
        fcntl.ioctl(sock, 0x8914, struct.pack("16sH14s", b"lo", flags | 0x1, b""))


def _reexec_in_private_network(argv: list[str]) -> int | None:
    """Run this benchmark again in new network + PID namespaces; ``None`` when that is not permitted here."""
    unshare = ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc"]
    if shutil.which("unshare") is None or subprocess.run([*unshare, "true"], capture_output=True).returncode:
        return None
    temp_dir = tempfile.mkdtemp(prefix="rkbench-", dir="/tmp")
    env = {
        **os.environ,
        NETNS_FLAG: "1",
        TEMP_DIR_ENV: temp_dir,
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    env.pop("RAY_ADDRESS", None)
    try:
        return subprocess.run([*unshare, sys.executable, str(Path(__file__).resolve()), *argv], env=env).returncode
    finally:
        shutil.rmtree(temp_dir, ignore_errors=True)  # every process of the namespace has ended by now


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--math", type=int, default=512, help="math completions")
    parser.add_argument(
        "--math-workload", default="math500", help="bench/math_reward.py workload: mixed, hard, math500"
    )
    parser.add_argument("--code", type=int, default=64, help="code solutions")
    parser.add_argument("--code-tests", type=int, default=3, help="call tests per code solution")
    parser.add_argument("--trivial", type=int, default=20000, help="think_format completions (overhead probe)")
    parser.add_argument("--actors", default="1,2,4", help="Ray pool sizes")
    parser.add_argument("--ray-cpus", type=int, default=4, help="logical CPUs of the local Ray node")
    parser.add_argument("--clients", type=int, default=2, help="concurrent clients (and server workers) for serve")
    parser.add_argument("--request-size", type=int, default=64, help="samples per request to the server")
    parser.add_argument("--cores-per-node", type=int, default=32, help="CPUs per node in the projection")
    parser.add_argument("--nodes", default="1,2,4,8,16", help="node counts in the projection")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per path; the fastest counts")
    parser.add_argument("--no-baseline", action="store_true", help="skip timing plain math-verify for the projection")
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--no-serve", action="store_true")
    parser.add_argument("--no-netns", action="store_true", help="run here even if Ray would bind other interfaces")
    args = parser.parse_args(argv)
    raw_argv = sys.argv[1:] if argv is None else argv

    if os.environ.get(NETNS_FLAG) == "1":
        _loopback_up()
    elif not args.no_netns:
        code = _reexec_in_private_network(raw_argv)
        if code is not None:
            return code
        print("unshare is not permitted here: Ray and the server run in this network namespace")

    print(f"machine: {os.cpu_count()} CPUs; Ray node: {args.ray_cpus} logical CPUs; one worker per actor")
    workloads = [
        trivial_workload(args.trivial),
        math_workload(args.math, args.math_workload),
        code_workload(args.code, args.code_tests),
    ]
    # Paths without Ray first: a Ray node starting up in the background would slow them down.
    measured: dict[str, list[Row]] = {}
    baseline = math_verify_cost(workloads[1]) if not args.no_baseline else None
    for work in workloads:
        rows = [run_in_process(work, args.repeat)]
        rows.append(run_served(work, args.clients, args.request_size, args.repeat) if not args.no_serve
                    else Row("rewardsmith serve", note="skipped: --no-serve"))  # fmt: skip
        measured[work.name] = rows

    ray_note = start_ray(args.ray_cpus) if not args.no_ray else "skipped: --no-ray"
    for work in workloads:
        for actors in _ints(args.actors):
            skipped = Row(f"ray, {actors} actors", note=str(ray_note))
            measured[work.name].append(run_on_ray(work, actors, args.repeat) if ray_note is None else skipped)
        again = run_in_process(work, args.repeat)  # the baseline twice, before and after: the less disturbed counts
        if again.seconds < measured[work.name][0].seconds:
            measured[work.name][0] = again
        report(work, measured[work.name])

    if ray_note is None:
        latency = ray_batch_latency()
        trivial, math = measured["think_format"], measured["math_equivalence"]
        # the whole Ray path per item on a reward with next to no work: an upper bound of the pool's overhead
        one_actor = next(r for r in trivial if r.path.startswith("ray, 1 ") and r.seconds)
        overhead = one_actor.seconds / one_actor.n
        costs = {"rewardsmith math_equivalence": math[0].seconds / math[0].n}
        if baseline is not None:
            costs["plain math-verify (what verl's pool runs)"] = baseline
        code = measured["code_tests"][0]
        costs[f"rewardsmith code_tests ({args.code_tests} call tests per solution)"] = code.seconds / code.n
        projection(costs, overhead, latency, args.cores_per_node, _ints(args.nodes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
