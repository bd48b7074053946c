"""A real ``rewardsmith sandbox serve`` (local backend) on a free 127.0.0.1 port, for the tests that talk to one."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sandbox_server(max_run_timeout: int) -> Iterator[str]:
    """Start the server on port 0, wait until ``/v1/ping`` answers, yield its URL, and stop it on exit."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rewardsmith",
            "sandbox",
            "serve",
            "--port",
            "0",
            "--concurrency",
            "4",
            "--max-run-timeout",
            str(max_run_timeout),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert match, f"server did not announce its address: {line!r}"
        url = f"http://127.0.0.1:{match.group(1)}"
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"{url}/v1/ping", timeout=2) as reply:
                    assert json.loads(reply.read()) == "pong"
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
