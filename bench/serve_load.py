"""Load test: a fixed number of concurrent clients against ``rewardsmith serve`` for a fixed time.

Each client sends ``/v1/score`` requests back to back (the next as soon as the previous answer arrives), each
with its own ``request_id``. At the end the run is checked, not only timed:

- every request got exactly one answer (none lost, none duplicated), and every 200 echoes its own id and
  carries one score per completion;
- the server counted exactly the requests the clients sent (from ``/metrics``, before and after);
- every 429 came while the queue was full (its body's ``queued`` equals ``max_queue``), with ``Retry-After``;
- no other status.

It reports requests/s, completions/s, p50/p99/max latency of answered requests and the number refused.

    python bench/serve_load.py                                  # starts a server: 8 clients x 10 s, think_format
    python bench/serve_load.py --workload slow --clients 16 --workers 2 --max-queue 4
    python bench/serve_load.py --url http://10.0.0.5:8000 --workload math --clients 32 --seconds 30
    python bench/serve_load.py --compare-batching --workload slow --batch 1 --clients 256   # OpenRLHF-shaped

``--compare-batching`` runs the same samples in one run against a server with micro-batching (the defaults), one
without (``--max-batch 1 --batch-wait-ms 0``: every request scored alone on its worker slot), and, as the
anchor, that second server with a client that batches ``--group`` samples per request itself; it prints the
ratios of completions/s.

Workloads: ``format`` (``think_format`` on ``--batch`` completions), ``math`` (``math_equivalence`` on a mix
of plain and symbolic answers), ``slow`` (``code_tests`` on programs that sleep ``--sleep-s``: a request that
holds its worker for a known time, so the queue fills).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

SPEC = [
    "think_format",
    {"name": "math_equivalence", "config": {"timeout_s": 5}},
    {"name": "code_tests", "config": {"timeout_s": 20}},
]
TESTS = {"asserts": ["assert f() == 1"]}


def workload(name: str, batch: int, sleep_s: float) -> dict[str, Any]:
    """The body every request of a run sends (without its ``request_id``)."""
    if name == "format":
        completions = ["<think>2+2=4</think> 4" if i % 2 else "4" for i in range(batch)]
        return {"reward": "think_format", "completions": completions}
    if name == "math":
        answers = [(r"\boxed{4}", "4"), (r"\boxed{\frac12}", "0.5"), (r"\boxed{(x-1)(x+1)}", "x^2-1"), ("7", "8")]
        picked = [answers[i % len(answers)] for i in range(batch)]
        return {
            "reward": "math_equivalence",
            "completions": [a for a, _ in picked],
            "columns": {"solution": [g for _, g in picked]},
        }
    if name == "slow":
        program = f"```python\nimport time\ntime.sleep({sleep_s})\ndef f():\n    return 1\n```"
        return {"reward": "code_tests", "completions": [program] * batch, "columns": {"tests": [TESTS] * batch}}
    raise ValueError(f"unknown workload {name!r}")


@dataclass
class LoadReport:
    clients: int
    seconds: float
    sent: int = 0
    ok: int = 0
    refused: int = 0
    refused_not_full: int = 0
    other_status: Counter = field(default_factory=Counter)
    transport_errors: int = 0
    answers_per_id: Counter = field(default_factory=Counter)
    mismatched: int = 0
    wrong_length: int = 0
    completions: int = 0
    latencies_s: list[float] = field(default_factory=list)
    server_counted: float | None = None
    #: from the first request to the last answer (requests sent before the end are answered after it)
    elapsed_s: float | None = None

    @property
    def lost(self) -> int:
        return sum(1 for n in self.answers_per_id.values() if n == 0)

    @property
    def duplicated(self) -> int:
        return sum(1 for n in self.answers_per_id.values() if n > 1)

    def percentile(self, q: float) -> float:
        if not self.latencies_s:
            return float("nan")
        ordered = sorted(self.latencies_s)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def problems(self) -> list[str]:
        """Everything that breaks the server's promises; empty when the run is clean."""
        found = []
        if self.lost or self.duplicated:
            found.append(f"{self.lost} requests lost, {self.duplicated} answered twice")
        if self.transport_errors:
            found.append(f"{self.transport_errors} transport errors")
        if self.mismatched or self.wrong_length:
            found.append(f"{self.mismatched} answers for another request, {self.wrong_length} of the wrong length")
        if self.refused_not_full:
            found.append(f"{self.refused_not_full} refusals while the queue was not full")
        if self.other_status:
            found.append(f"unexpected statuses {dict(self.other_status)}")
        if self.server_counted is not None and self.server_counted != self.sent:
            found.append(f"server counted {self.server_counted:g} requests, clients sent {self.sent}")
        return found

    def summary(self) -> dict[str, Any]:
        return {
            "clients": self.clients,
            "seconds": self.seconds,
            "sent": self.sent,
            "answered_200": self.ok,
            "refused_429": self.refused,
            "elapsed_s": round(self.elapsed_s or self.seconds, 2),
            "requests_per_s": round(self.ok / (self.elapsed_s or self.seconds), 2),
            "completions_per_s": round(self.completions / (self.elapsed_s or self.seconds), 2),
            "p50_s": round(self.percentile(0.50), 4),
            "p99_s": round(self.percentile(0.99), 4),
            "max_s": round(max(self.latencies_s), 4) if self.latencies_s else None,
            "problems": self.problems(),
        }


async def run_load(
    url: str,
    body: dict[str, Any],
    clients: int,
    seconds: float,
    token: str | None = None,
    refused_pause_s: float = 0.05,
    warm_up: bool = True,
) -> LoadReport:
    """``clients`` concurrent clients sending ``body`` back to back for ``seconds``; the checked report."""
    import httpx

    headers = {"authorization": f"Bearer {token}"} if token else {}
    report = LoadReport(clients=clients, seconds=seconds)
    n = len(body["completions"])
    limits = httpx.Limits(max_connections=clients + 2, max_keepalive_connections=clients + 2)
    async with httpx.AsyncClient(timeout=300, headers=headers, limits=limits) as http:
        if warm_up:  # reward pools start on first use (math workers, sandboxes): not part of the steady state
            (await http.post(f"{url}/v1/score", json=body)).raise_for_status()
        before = await _server_count(http, url)
        stop_at = time.monotonic() + seconds

        async def client(number: int) -> None:
            sequence = 0
            while time.monotonic() < stop_at:
                request_id = f"c{number}-{sequence}"
                sequence += 1
                report.sent += 1
                report.answers_per_id[request_id] += 0
                started = time.monotonic()
                try:
                    response = await http.post(f"{url}/v1/score", json={**body, "request_id": request_id})
                except httpx.HTTPError:
                    report.transport_errors += 1
                    continue
                report.answers_per_id[request_id] += 1
                if response.status_code == 200:
                    answer = response.json()
                    report.ok += 1
                    report.latencies_s.append(time.monotonic() - started)
                    report.completions += n
                    report.mismatched += answer.get("request_id") != request_id
                    report.wrong_length += len(answer.get("scores", [])) != n
                elif response.status_code == 429:
                    report.refused += 1
                    refusal = response.json()
                    full = refusal.get("queued") == refusal.get("max_queue") and "retry-after" in response.headers
                    report.refused_not_full += not full
                    await asyncio.sleep(refused_pause_s)
                else:
                    report.other_status[response.status_code] += 1

        started = time.monotonic()
        await asyncio.gather(*(client(i) for i in range(clients)))
        report.elapsed_s = time.monotonic() - started
        after = await _server_count(http, url)
    if before is not None and after is not None:
        report.server_counted = after - before
    return report


async def _server_count(http: Any, url: str) -> float | None:
    """``/v1/score`` requests the server has answered so far (any status), from its Prometheus metrics."""
    try:
        text = (await http.get(f"{url}/metrics")).text
    except Exception:
        return None
    total = 0.0
    for line in text.splitlines():
        if line.startswith('rewardsmith_requests_total{endpoint="/v1/score"'):
            total += float(line.rsplit(" ", 1)[1])
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=None, help="a running server (default: start one on 127.0.0.1)")
    parser.add_argument("--workload", choices=("format", "math", "slow"), default="format")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--batch", type=int, default=16, help="completions per request")
    parser.add_argument("--sleep-s", type=float, default=0.2, help="slow workload: seconds each program sleeps")
    parser.add_argument("--workers", type=int, default=4, help="started server: requests scored at once")
    parser.add_argument("--max-queue", type=int, default=8, help="started server: requests that may wait")
    parser.add_argument("--token", default=None, help="bearer token of a running server")
    parser.add_argument(
        "--compare-batching", action="store_true", help="started servers with and without micro-batching; the ratio"
    )
    parser.add_argument("--group", type=int, default=16, help="--compare-batching: samples per anchor request")
    args = parser.parse_args(argv)

    body = workload(args.workload, args.batch, args.sleep_s)
    if args.compare_batching:
        return compare_batching(body, args)
    if args.url:
        report = asyncio.run(run_load(args.url, body, args.clients, args.seconds, args.token))
    else:
        from rewardsmith.adapters.runtime.serve.process import ServerProcess

        options = ("--workers", str(args.workers), "--max-queue", str(args.max_queue))
        with ServerProcess(SPEC, *options) as server:
            report = asyncio.run(run_load(server.url, body, args.clients, args.seconds))
    summary = report.summary()
    print(json.dumps(summary, indent=2))
    if report.latencies_s:
        print(f"latency mean {statistics.fmean(report.latencies_s):.4f} s over {report.ok} answered requests")
    return 1 if summary["problems"] else 0


def compare_batching(body: dict[str, Any], args: argparse.Namespace) -> int:
    """The same samples in three setups, one run: completions/s of micro-batching against the other two.

    1. one-sample requests (OpenRLHF's pattern) to a server with micro-batching (the defaults);
    2. the same requests to a server scoring one request per worker slot (``--max-batch 1 --batch-wait-ms 0``);
    3. the anchor: the same samples sent by a client that batches them itself (``--group`` per request) to the
       server of setup 2, i.e. the throughput a batching client got before.
    """
    from rewardsmith.adapters.runtime.serve.process import ServerProcess

    capacity = ("--workers", str(args.workers), "--max-queue", str(max(args.max_queue, args.clients)))
    unbatched = ("--max-batch", "1", "--batch-wait-ms", "0")
    grouped = workload(args.workload, len(body["completions"]) * args.group, args.sleep_s)
    setups = [
        ("micro-batching", (), body, args.clients),
        ("one request per worker", unbatched, body, args.clients),
        (f"client batches of {args.group}", unbatched, grouped, max(1, args.clients // args.group)),
    ]
    rates, problems = {}, []
    for label, extra, sent, clients in setups:
        with ServerProcess(SPEC, *capacity, *extra) as server:
            # Warm every distinct sample first (reward pools start cold, caches fill): the steady state is compared.
            import httpx

            httpx.post(f"{server.url}/v1/score", json=grouped, timeout=300).raise_for_status()
            report = asyncio.run(run_load(server.url, sent, clients, args.seconds))
        summary = report.summary()
        print(json.dumps({"setup": label, **summary}))
        rates[label] = summary["completions_per_s"]
        problems += summary["problems"]
    base = rates["micro-batching"]
    per_request = len(body["completions"])
    for label, *_ in setups[1:]:
        print(
            f"{args.workload}, {per_request} completion(s) per request, {args.clients} clients: micro-batching "
            f"{base / max(rates[label], 1e-9):.2f}x the completions/s of {label}"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
