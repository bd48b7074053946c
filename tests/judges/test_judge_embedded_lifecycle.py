"""The embedded llama.cpp server never outlives the process that started it, even one killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

PARENT = """
import time
from rewardsmith.judges.clients.embedded import EmbeddedServer
server = EmbeddedServer(startup_timeout=120).start()
print(server.process.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie is dead for our purposes
        return fh.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.llama
@pytest.mark.slow
def test_server_dies_with_a_sigkilled_parent() -> None:
    from rewardsmith.judges.clients.embedded import llama_server_missing, packaged_model_path

    missing = llama_server_missing()
    if missing:
        pytest.skip(f"llama.cpp server unavailable: {missing}")
    packaged_model_path()
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        line = parent.stdout.readline()
        assert line.strip().isdigit(), "the parent did not report a server pid"
        server_pid = int(line)
        assert _alive(server_pid)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
    deadline = time.monotonic() + 20
    while _alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(server_pid):
        os.kill(server_pid, signal.SIGKILL)
        pytest.fail("the llama.cpp server outlived its SIGKILLed parent")
