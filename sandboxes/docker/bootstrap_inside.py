"""Bootstrap that runs *inside* a pooled Docker container, once per run, around the program.

The host (``backend.py``) reads this file as package data and runs it with ``python3 -I -S -c`` as the
unprivileged run user (uid 10001). argv[1] is a JSON spec; stdin carries an 8-byte length, a JSON map
path -> base64 content, then another 8-byte length and the program's own stdin. The program reads its stdin from a
memory file, never from the exec's stream: whether the engine passes the host's half-close on as EOF depends on
timing under load, and a program that reads to EOF (``readFileSync(0)``, ``sys.stdin.read()``) would wait for it
until its wall limit. Before the program it makes the container as clean as a
fresh one (:func:`clean_up`: SIGKILL whatever an earlier run left alive, remove its SysV shared memory, message
queues and semaphores and its POSIX message queues, empty the work areas), writes the files, sets rlimits,
prints the ready token and runs the program under ``timeout`` as its child, no longer dumpable itself (the
program, same uid, can neither trace it nor read its memory). When the program ends it cleans up again, so
nothing of the run outlives it (the work areas are left for the host's ``fetch_files`` read, after which the host
runs the cleanup alone), and exits with the program's status (a signal death as ``128 + signal``).

The cleanup fails closed: a program can leave its area in a state a plain delete cannot undo (its own area made
unwritable, a tree too deep or too big, a FIFO where a file is expected) and plant files for the next run to
import. So the cleanup *verifies* its result (every area empty, the run's own area back to mode 0700, no process
of the uid left) and reports anything else as failure: exit 3 before a run (no ready token: the host retries the
run in a fresh container) or :data:`CLEANUP_FAILED` after it (the host discards the container). Exit codes above
128 (or :data:`CLEANUP_FAILED`) may also mean the program killed this process before the cleanup: the host then runs
``--clean-only``, this script's other mode. Standard library only.
"""

import base64
import ctypes
import json
import os
import resource
import signal
import stat
import sys
import time

IPC_RMID = 0
PR_SET_DUMPABLE = 4
CLEANUP_FAILED = 125
WIPE_BUDGET_S = 5.0  # a tree bigger than this can empty is not waited for: the container is replaced instead
MAX_DEPTH = 64  # deeper directories are not descended into (their removal fails, and verification sees it)


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


def empty(area, deadline):
    """Remove what is under ``area`` (kept itself), directory descriptors all the way down: no path grows with
    the depth, so neither a long path nor a deep tree stops it. A directory the run made unreadable or
    unwritable is given back its owner's rights first. Failures are not reported here: :func:`verify` decides."""
    try:
        fd = os.open(area, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        empty_fd(fd, 0, deadline)
    finally:
        os.close(fd)


def empty_fd(fd, depth, deadline):
    try:
        names = os.listdir(fd)
    except OSError:
        return
    for name in names:
        if time.monotonic() > deadline:
            return
        try:
            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            if not stat.S_ISDIR(mode):
                os.unlink(name, dir_fd=fd)
                continue
            if depth < MAX_DEPTH:
                os.chmod(name, 0o700, dir_fd=fd)  # a directory, not a link (no other process of the uid is left)
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                try:
                    empty_fd(child, depth + 1, deadline)
                finally:
                    os.close(child)
            os.rmdir(name, dir_fd=fd)
        except OSError:
            continue


def verify(areas, uid):
    """Why the work areas are not as a fresh container has them (empty; the run's own area 0700), or ''."""
    for area in areas:
        try:
            left = os.listdir(area)
            info = os.stat(area, follow_symlinks=False)
        except OSError as exc:
            return f"{area}: {exc.strerror}"
        if left:
            return f"{area}: {len(left)} entries left"
        if info.st_uid == uid and stat.S_IMODE(info.st_mode) != 0o700:
            return f"{area}: mode {stat.S_IMODE(info.st_mode):o}"
    return ""


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
    """Kill every process of ``uid`` but this one, remove its kernel objects, empty ``areas``; True only when
    verified clean (fail closed: the host then discards the container)."""
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
    deadline = time.monotonic() + WIPE_BUDGET_S
    for area in areas:
        try:
            if os.stat(area, follow_symlinks=False).st_uid == uid:
                os.chmod(area, 0o700)  # the run may have made its own area unwritable or unsearchable
        except OSError:
            pass
        empty(area, deadline)
    problem = verify(areas, uid) or ("" if not survivors(me, uid) else "a process of the run is back")
    if problem:
        sys.stderr.write(f"bootstrap: work area not clean after the run: {problem}\n")
        return False
    return True


def write_files(files):
    """Write the request's files into the (verified empty) work area; nothing already there is followed or
    reused: each file is created new (``O_EXCL | O_NOFOLLOW``)."""
    for path, content in files.items():
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        # like the local backend: a file handed in (a compiled binary) can be run
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o700)
        try:
            view = memoryview(base64.b64decode(content))
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)


def main():
    spec = json.loads(sys.argv[1])
    me, uid = os.getpid(), os.getuid()
    if not clean_up(me, uid, spec["wipe"]):
        sys.exit(3)
    if spec.get("clean_only"):
        return
    size = int.from_bytes(read_exactly(8), "big")
    write_files(json.loads(read_exactly(size)))
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
