"""Docker engine plumbing of the sandbox backend: exec streams, exit codes and container state read on the host."""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path


def ulimit(name: str, value: int):
    from docker.types import Ulimit

    return Ulimit(name=name, soft=value, hard=value)


def as_bytes(value: str | bytes) -> bytes:
    return value.encode() if isinstance(value, str) else value


def raw_socket(sock) -> socket.socket:
    return getattr(sock, "_sock", sock)


def feed(sock: socket.socket, data: bytes) -> None:
    """Write the bootstrap payload and the program's stdin, then half-close so the program sees EOF."""
    try:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the exec ended before reading everything: its verdict says why


def hang_up(sock: socket.socket) -> None:
    """Drop the exec's stream now. ``close`` alone waits for the HTTP response's reference to go away, and an
    engine still writing a flood into the unread connection blocks the container's kill for 10 s."""
    for action in (lambda: sock.shutdown(socket.SHUT_RDWR), sock.close):
        try:
            action()
        except OSError:
            pass


def read_frames(sock: socket.socket, deadline: float, cap: int) -> tuple[tuple[bytes, bytes], str]:
    """Demultiplex docker's stdout/stderr frames until EOF, the deadline or more than ``cap`` bytes on a stream."""
    out = [bytearray(), bytearray(), bytearray()]
    buffer = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return (bytes(out[1]), bytes(out[2])), "deadline"
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(1 << 16)
        except TimeoutError:
            return (bytes(out[1]), bytes(out[2])), "deadline"
        if not chunk:
            return (bytes(out[1]), bytes(out[2])), "eof"
        buffer += chunk
        while len(buffer) >= 8:
            stream, size = buffer[0], struct.unpack(">I", buffer[4:8])[0]
            if len(buffer) < 8 + size:
                break
            if stream in (1, 2):
                out[stream] += buffer[8 : 8 + size]
            del buffer[: 8 + size]
        if len(out[1]) > cap or len(out[2]) > cap:
            return (bytes(out[1]), bytes(out[2])), "flood"


def exec_exit_code(api, exec_id: str) -> int | None:
    for _ in range(50):
        info = api.exec_inspect(exec_id)
        if not info.get("Running") and info.get("ExitCode") is not None:
            return int(info["ExitCode"])
        time.sleep(0.02)
    return None


def oom_kills(container_id: str) -> int:
    """OOM kills so far in the container's memory cgroup (cgroup v1 or v2), read on the host; 0 if unreadable."""
    candidates = [
        (Path(f"/sys/fs/cgroup/memory/docker/{container_id}/memory.oom_control"), "oom_kill "),
        (Path(f"/sys/fs/cgroup/docker/{container_id}/memory.events"), "oom_kill "),
        (Path(f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/memory.events"), "oom_kill "),
    ]
    for path, key in candidates:
        try:
            for line in path.read_text().splitlines():
                if line.startswith(key):
                    return int(line.split()[1])
        except (OSError, ValueError):
            continue
    return 0


def still_running(container, settle_s: float = 0.0) -> bool:
    """Whether the container is up; ``settle_s`` gives the engine time to notice a kill that just happened."""
    deadline = time.monotonic() + settle_s
    while True:
        try:
            container.handle.reload()
        except Exception:
            return False
        if container.handle.status != "running":
            return False
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.05)


def only_init_left(container_id: str) -> bool:
    """True when only init and the keep-alive are left in the container (read from its pids cgroup on the host).

    Leftovers (``setsid`` orphans, a fork bomb's children) would otherwise hold pids and memory against the next
    run; such a container is replaced. Without a readable cgroup the bootstrap's cleanup is the only defence.
    """
    paths = [
        Path(f"/sys/fs/cgroup/pids/docker/{container_id}/pids.current"),
        Path(f"/sys/fs/cgroup/docker/{container_id}/pids.current"),
        Path(f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/pids.current"),
    ]
    path = next((p for p in paths if p.exists()), None)
    if path is None:
        return True
    for _ in range(10):  # the exec's own process may take a moment to be reaped
        try:
            if int(path.read_text()) <= 2:
                return True
        except (OSError, ValueError):
            return True
        time.sleep(0.01)
    return False


def remove_containers(client, ids: set[str]) -> None:
    for container_id in list(ids):
        try:
            client.api.remove_container(container_id, force=True)
        except Exception:
            pass
        ids.discard(container_id)
