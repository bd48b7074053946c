"""A real two-node Ray cluster for tests, on loopback inside a private network namespace.

Ray binds to the machine's outward interface even when told ``--node-ip-address=127.0.0.1`` if one exists, so
the cluster and everything that talks to it run in ``unshare --net`` (only ``lo`` exists there) plus a PID
namespace: when the test session ends, the kernel ends every Ray process it started, and ``ray stop`` inside
cannot touch a Ray cluster of the host. :func:`run_in_private_network` re-runs pytest in such a namespace;
:class:`LocalCluster` starts a head and a worker node there with ``ray start`` and can kill a node.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV_FLAG = "REWARDSMITH_TEST_RAY_NETNS"
IN_RAY_NETNS = os.environ.get(ENV_FLAG) == "1"
ROOT = Path(__file__).resolve().parents[2]
SKIP_OUTSIDE = "runs inside a private network namespace with a two-node Ray cluster (tests/scale/test_ray_netns.py)"

#: New network and PID namespaces with their own /proc; --kill-child ends the whole tree if unshare is killed.
UNSHARE = ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc"]

#: The ``ray`` command of this interpreter's environment (PATH may lead to another one).
RAY_CLI = str(Path(sys.executable).with_name("ray")) if Path(sys.executable).with_name("ray").exists() else "ray"

HEAD_PORT = 6379
#: Small nodes (the machine is shared) that notice a dead node within about two seconds instead of Ray's 30.
NODE_CPUS = 1
OBJECT_STORE_BYTES = 100_000_000
SYSTEM_CONFIG = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 500,
    "health_check_timeout_ms": 500,
    "health_check_failure_threshold": 3,
}

#: Token auth is Ray's guard for clusters others can reach; nothing outside the namespace can reach this one, and a
#: token left in ~/.ray by an earlier local ``ray.init`` would otherwise be required by the head but not sent by
#: the joining worker node (Ray 2.60 enables it on ``ray start --head`` only).
PRIVATE_CLUSTER_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


def ray_missing() -> str | None:
    try:
        import ray  # noqa: F401
    except ImportError:
        return "ray is not installed (pip install 'rewardsmith[ray]')"
    return None


@functools.cache
def can_unshare_net() -> bool:
    """True where a private network + PID namespace can be made (root, util-linux present)."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run([*UNSHARE, "true"], capture_output=True, timeout=30, check=False)
    return probe.returncode == 0


def run_in_private_network(modules: list[str], timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``pytest MODULES`` in new network and PID namespaces; the cluster fixture brings ``lo`` up there."""
    env = {**os.environ, ENV_FLAG: "1", **PRIVATE_CLUSTER_ENV}
    env.pop("RAY_ADDRESS", None)
    argv = [*UNSHARE, sys.executable, "-m", "pytest", *modules, "-q", "-rs", "-p", "no:cacheprovider",
            "--durations=0"]  # fmt: skip
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)


def loopback_up() -> None:
    """``ip link set lo up`` without iproute2: set IFF_UP on ``lo`` with the SIOCSIFFLAGS ioctl."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(sock, siocgifflags, request))[1]
        fcntl.ioctl(sock, siocsifflags, struct.pack("16sH14s", b"lo", flags | iff_up, b""))


class LocalCluster:
    """A head and worker nodes started with ``ray start`` on 127.0.0.1; only meant for a private namespace."""

    def __init__(self) -> None:
        self.address = f"127.0.0.1:{HEAD_PORT}"
        # A short root: Ray's unix socket paths under it must stay below the 107-byte limit.
        self.temp_dir = tempfile.mkdtemp(prefix="rkray-", dir="/tmp")
        # Workers import the repository (tests' reward plugins included) like the driver does.
        pythonpath = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        self.env = {**os.environ, **PRIVATE_CLUSTER_ENV, "PYTHONPATH": pythonpath}
        self.env.pop("RAY_ADDRESS", None)

    def start(self) -> None:
        if not IN_RAY_NETNS:  # `ray stop` in the host's namespaces would stop every Ray cluster on the machine
            raise RuntimeError("LocalCluster runs only inside run_in_private_network's namespaces")
        loopback_up()
        self._ray_start(
            "--head", f"--port={HEAD_PORT}", "--include-dashboard=false", f"--temp-dir={self.temp_dir}",
            f"--system-config={json.dumps(SYSTEM_CONFIG)}",
        )  # fmt: skip
        self.add_worker()

    def add_worker(self) -> None:
        """Start one more worker node; once the driver is connected, wait until the cluster sees it."""
        import ray

        before = len(self.alive_nodes()) if ray.is_initialized() else None
        self._ray_start(f"--address={self.address}")
        self.wait_for_nodes(None if before is None else before + 1)

    def stop(self) -> None:
        """``ray stop`` sees only this PID namespace's processes, so it cannot stop anyone else's cluster."""
        subprocess.run([RAY_CLI, "stop", "--force"], env=self.env, capture_output=True, timeout=120, check=False)
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    # -- the cluster as the driver sees it (after ray.init) -------------------------------------------
    @staticmethod
    def alive_nodes() -> list[dict]:
        import ray

        return [n for n in ray.nodes() if n["Alive"]]

    @classmethod
    def head_node_id(cls) -> str:
        return next(n["NodeID"] for n in cls.alive_nodes() if "node:__internal_head__" in n["Resources"])

    @classmethod
    def worker_node_ids(cls) -> list[str]:
        head = cls.head_node_id()
        return [n["NodeID"] for n in cls.alive_nodes() if n["NodeID"] != head]

    def wait_for_nodes(self, count: int | None, timeout_s: float = 60) -> None:
        """Until ``count`` nodes are alive (no-op before the driver connects)."""
        import ray

        if count is None or not ray.is_initialized():
            return
        deadline = time.monotonic() + timeout_s
        while len(self.alive_nodes()) != count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(self.alive_nodes())} Ray nodes alive, expected {count}")
            time.sleep(0.2)

    def kill_node(self, node_id: str) -> int:
        """SIGKILL a node's raylet and every process of that node (its workers and agents); how many died."""
        import psutil

        victims: dict[int, psutil.Process] = {}
        for proc in psutil.process_iter(["cmdline"]):
            cmdline = " ".join(proc.info["cmdline"] or [])
            if f"--node_id={node_id}" in cmdline or f"--node-id={node_id}" in cmdline:
                victims[proc.pid] = proc
                for child in proc.children(recursive=True):
                    victims[child.pid] = child
        for proc in victims.values():
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return len(victims)

    def _ray_start(self, *args: str) -> None:
        argv = [RAY_CLI, "start", "--node-ip-address=127.0.0.1", f"--num-cpus={NODE_CPUS}",
                f"--object-store-memory={OBJECT_STORE_BYTES}", "--disable-usage-stats", *args]  # fmt: skip
        done = subprocess.run(argv, env=self.env, cwd=ROOT, capture_output=True, text=True, timeout=180, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


_shared: LocalCluster | None = None


def shared_cluster() -> LocalCluster:
    """The session's one cluster (started on first use, stopped at exit), with this process connected to it.

    A module-level singleton rather than a fixture per test module: starting two nodes costs about half a
    minute here, and a process can join only one Ray cluster anyway.
    """
    global _shared
    if _shared is None:
        import atexit

        import ray

        cluster = LocalCluster()
        atexit.register(cluster.stop)
        cluster.start()
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes(2)
        _shared = cluster
    return _shared
