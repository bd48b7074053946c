"""Launcher of the embedded llama.cpp server that dies with the process that started it.

``python -m rewardkit.judges.clients.embedded_child PARENT_PID -- <llama_cpp.server args>``. A parent killed with
SIGKILL cannot stop its children; this watchdog notices the parent is gone and ends the server, so a
crashed RLAIF run or audit never leaves a model server behind.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import time


def _watch(parent_pid: int, interval_s: float = 1.0) -> None:
    while True:
        time.sleep(interval_s)
        if os.getppid() != parent_pid:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            os._exit(1)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] != "--":
        raise SystemExit("usage: python -m rewardkit.judges.clients.embedded_child PARENT_PID -- SERVER_ARGS...")
    parent_pid = int(argv[0])
    threading.Thread(target=_watch, args=(parent_pid,), daemon=True, name="parent-watchdog").start()
    sys.argv = ["llama_cpp.server", *argv[2:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
