"""Bootstrap that runs *inside* a pooled Docker container, once per run, before the program exists.

The host (``backend.py``) reads this file as package data and runs it with ``python3 -I -S -c`` as the
unprivileged run user (uid 10001). argv[1] is a JSON spec; stdin carries an 8-byte length, a JSON map
path -> base64 content, then the program's own stdin. It SIGKILLs what the previous run left alive, wipes the
work areas, writes the files, sets rlimits, prints the ready token and execs the program under ``timeout``.
Standard library only.
"""

import base64
import json
import os
import resource
import signal
import sys


def survivors(me, uid):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/status") as f:
                fields = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        except OSError:
            continue
        if fields.get("Uid", "").split()[:1] == [str(uid)] and not fields.get("State", "").strip().startswith("Z"):
            found.append(name)
    return found


def wipe(path):
    for name in os.listdir(path):
        full = os.path.join(path, name)
        try:
            if os.path.isdir(full) and not os.path.islink(full):
                os.chmod(full, 0o700)
                wipe(full)
                os.rmdir(full)
            else:
                os.unlink(full)
        except OSError:
            pass


def read_exactly(n):
    chunks = []
    while n:
        chunk = os.read(0, n)
        if not chunk:
            raise EOFError("stdin closed early")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def main():
    spec = json.loads(sys.argv[1])
    me, uid = os.getpid(), os.getuid()
    for _ in range(200):
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        if not survivors(me, uid):
            break
    else:
        sys.stderr.write("bootstrap: processes of an earlier run survive SIGKILL\n")
        sys.exit(3)
    for area in spec["wipe"]:
        if os.path.isdir(area):
            wipe(area)
    size = int.from_bytes(read_exactly(8), "big")
    for path, content in json.loads(read_exactly(size)).items():
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(content))
        os.chmod(path, 0o700)  # like the local backend: a file handed in (a compiled binary) can be run
    cpu = spec["cpu_s"]
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (spec["fsize"], spec["fsize"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.write(1, spec["ready"].encode("latin-1"))
    os.execvp("timeout", ["timeout", "-s", "KILL", spec["wall_s"], *spec["argv"]])


if __name__ == "__main__":
    main()
