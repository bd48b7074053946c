"""Bootstrap that runs *inside* a pooled Docker container, once per run, around the program.

The host (``backend.py``) reads this file as package data and runs it with ``python3 -I -S -c`` as the
unprivileged run user (uid 10001). argv[1] is a JSON spec; stdin carries an 8-byte length, a JSON map
path -> base64 content, then another 8-byte length and the program's own stdin. The program reads its stdin from a
memory file, never from the exec's stream: whether the engine passes the host's half-close on as EOF depends on
timing under load, and a program that reads to EOF (``readFileSync(0)``, ``sys.stdin.read()``) would wait for it
until its wall limit. Before the program it makes the container as clean as a
fresh one (:func:`clean_up`: SIGKILL whatever an earlier run left alive, remove its SysV shared memory, message
queues and semaphores and its POSIX message queues, wipe the work areas), writes the files, sets rlimits,
prints the ready token and runs the program under ``timeout`` as its child, no longer dumpable itself (the
program, same uid, can neither trace it nor read its memory). When the program ends it cleans up again, so
nothing of the run outlives it (the work areas are left for the host's ``fetch_files`` read, which empties
them), and exits with the program's status (a signal death as ``128 + signal``). Exit codes above 128 (or
:data:`CLEANUP_FAILED`) may also mean the program killed this process before the cleanup: the host then runs
``--clean-only``, this script's other mode. Standard library only.
"""

import base64
import ctypes
import json
import os
import resource
import signal
import sys

IPC_RMID = 0
PR_SET_DUMPABLE = 4
CLEANUP_FAILED = 125


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


def stdin_file(data):
    """A descriptor reading ``data`` then EOF: a memory file (nothing on disk, gone with its last descriptor)."""
    fd = os.memfd_create("rk-stdin", 0)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def remove_ipc():
    """Remove every SysV IPC object and POSIX message queue this uid can remove (the run's: it created them).
    Returns how many are left."""
    libc = ctypes.CDLL(None, use_errno=True)
    removers = {
        "shm": lambda ident: libc.shmctl(ident, IPC_RMID, None),
        "msg": lambda ident: libc.msgctl(ident, IPC_RMID, None),
        "sem": lambda ident: libc.semctl(ident, 0, IPC_RMID),
    }
    left = 0
    for kind, remove in removers.items():
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            if remove(int(row.split()[1])) != 0:
                left += 1
    if os.path.isdir("/dev/mqueue"):
        for name in os.listdir("/dev/mqueue"):
            try:
                os.unlink(os.path.join("/dev/mqueue", name))
            except OSError:
                left += 1
    return left


def clean_up(me, uid, areas):
    """Kill every process of ``uid`` but this one, remove its kernel objects, empty ``areas``; True when clean."""
    for _ in range(200):
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        if not survivors(me, uid):
            break
    else:
        sys.stderr.write("bootstrap: processes of an earlier run survive SIGKILL\n")
        return False
    if remove_ipc():
        sys.stderr.write("bootstrap: kernel objects of an earlier run cannot be removed\n")
        return False
    for area in areas:
        if os.path.isdir(area):
            wipe(area)
    return True


def main():
    spec = json.loads(sys.argv[1])
    me, uid = os.getpid(), os.getuid()
    if not clean_up(me, uid, spec["wipe"]):
        sys.exit(3)
    if spec.get("clean_only"):
        return
    size = int.from_bytes(read_exactly(8), "big")
    for path, content in json.loads(read_exactly(size)).items():
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(content))
        os.chmod(path, 0o700)  # like the local backend: a file handed in (a compiled binary) can be run
    program_stdin = stdin_file(read_exactly(int.from_bytes(read_exactly(8), "big")))
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    os.write(1, spec["ready"].encode("latin-1"))
    program = os.fork()
    if program == 0:
        os.dup2(program_stdin, 0)
        os.close(program_stdin)
        cpu = spec["cpu_s"]
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (spec["fsize"], spec["fsize"]))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.execvp("timeout", ["timeout", "-s", "KILL", spec["wall_s"], *spec["argv"]])
    os.close(0)
    os.close(program_stdin)
    _, status = os.waitpid(program, 0)
    code = os.waitstatus_to_exitcode(status)
    code = 128 - code if code < 0 else code
    try:
        clean = clean_up(me, uid, [] if spec.get("keep_files") else spec["wipe"])
    except Exception:
        clean = False
    os._exit(code if clean else CLEANUP_FAILED)


if __name__ == "__main__":
    main()
