"""Benchmark: sync judge calls through rewardsmith's bridge (one kept event loop per thread) against a private loop per
call (``asyncio.run``, what the bridge did before), on a real OpenAI-compatible server on 127.0.0.1.

An async HTTP client is bound to the loop that made it, so a private loop per call also means a new SDK client and a
new TCP connection per call; a kept loop reuses both. Each side makes ``--calls`` sync scale-judge calls (one
request each) from plain code and from inside a running loop (a coroutine calling the sync face, as a notebook or
an async trainer does), after a warm-up; it prints ms per call, the connections the server accepted and the ratio.
``--answer-delay`` makes the server take that long per answer (a real judge model), which the ratio shrinks under.

    python bench/bridge_reuse.py                     # 200 calls
    python bench/bridge_reuse.py --calls 500 --answer-delay 0.05

Measured on the shared 2-core dev machine, 200 calls, two runs: plain code 6.5-9.6x per call (57.3 -> 8.8 ms loaded,
37.1 -> 3.9 ms), inside a running loop 8.7-9.4x; 200 connections -> at most 1; with a 50 ms answer delay 2.2x, 3.0x.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/support: the servers the tests run against

from rewardsmith.bridge import close_thread_loop, closing
from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.scale import ScaleJudge
from tests.support.fault_server import FaultServer

PROMPT, RESPONSE = "What is 2 + 2?", "4"


def private_loop_call(judge: ScaleJudge) -> float:
    """The anchor: a private loop per call whose client connections close with it."""
    return asyncio.run(closing(judge.client, judge.ajudge(PROMPT, RESPONSE))).normalized


def private_loop_call_inside(judge: ScaleJudge) -> float:
    """The anchor inside a running loop: a private loop in a fresh worker thread per call."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(private_loop_call, judge).result()


def bridge_call(judge: ScaleJudge) -> float:
    return judge.judge(PROMPT, RESPONSE).normalized


def timed(server: FaultServer, call: Callable[[], Any], calls: int, *, inside_a_loop: bool) -> tuple[float, int]:
    """Seconds per call and the connections the server accepted, over ``calls`` calls after a warm-up."""

    def run_all() -> None:
        for _ in range(calls):
            call()

    call()  # warm-up: imports, the first SDK client
    before = server.connections
    start = time.perf_counter()
    if inside_a_loop:

        async def inside() -> None:
            run_all()  # the sync face called from a coroutine: asyncio.run would refuse here

        asyncio.run(inside())
    else:
        run_all()
    return (time.perf_counter() - start) / calls, server.connections - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--answer-delay", type=float, default=0.0, help="seconds the server takes per answer")
    args = parser.parse_args()

    with FaultServer(default_answer="Score: 4") as server:
        server.answer_delay_s = args.answer_delay
        client = make_client("openai", model="bench-judge", base_url=server.base_url, timeout=30.0, max_retries=0)
        judge = ScaleJudge(client, scale=5)
        print(f"{args.calls} sync scale calls, server answer delay {args.answer_delay * 1000:.0f} ms")
        print(f"{'where':<24} {'private loop ms':>16} {'kept loop ms':>13} {'connections':>13} {'ratio':>7}")
        for where, anchor, inside in (
            ("plain code", private_loop_call, False),
            ("inside a running loop", private_loop_call_inside, True),
        ):
            old, old_connections = timed(server, lambda a=anchor: a(judge), args.calls, inside_a_loop=inside)
            new, new_connections = timed(server, lambda: bridge_call(judge), args.calls, inside_a_loop=inside)
            connections = f"{old_connections} -> {new_connections}"
            print(f"{where:<24} {old * 1000:>16.2f} {new * 1000:>13.2f} {connections:>13} {old / new:>6.2f}x")
        close_thread_loop()


if __name__ == "__main__":
    main()
