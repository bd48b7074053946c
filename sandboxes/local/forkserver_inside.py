"""Warm interpreter that lives inside the bubblewrap sandbox and forks one isolated run per request.

Runs as a standalone script (standard library only) under bwrap with a few capabilities (SYS_ADMIN,
SETUID, SETGID, KILL, CHOWN) in its own network, IPC, UTS and PID namespaces, a read-only ``/usr`` and a
cleared environment. Two processes share the work, so that no run starts from memory that ever held another
run's request or response:

* the *zygote* is forked once, right after the warm-up and before the first request; it never reads a request,
  a response or a byte of any run's output. For each run it receives the run's pipe ends (``SCM_RIGHTS``) and
  forks a supervisor from its pristine memory;
* the *controller* (the original process) reads the requests, hands each one to its supervisor over a pipe,
  pumps the run's stdin/stdout/stderr and answers the host. It never forks, so what it holds reaches no run.

Each *supervisor*

1. enters a fresh mount, PID and IPC namespace (SysV shared memory, message queues, semaphores and POSIX
   message queues of a run die with it), mounts fresh size-capped tmpfs on ``/work``, ``/tmp`` and
   ``/dev/shm`` and writes the request's files there;
2. forks the *program*, which is PID 1 of that namespace (so every orphan, ``setsid`` or not, dies with it),
   joins the run's cgroups (created by the host, reached through directory descriptors passed in at start,
   never through a mount), mounts its own ``/proc`` (other runs and the forkserver are invisible), sets
   rlimits, drops to a fresh unprivileged uid (no capabilities left), sets ``no_new_privs``, loads the seccomp
   BPF and then either
   ``exec``s the command or, for ``python3 FILE.py``, runs the file in this already-warm interpreter;
3. reports the program's PID, wait status and rusage to the forkserver over a pipe the program never holds.

*Warm scripts*: the host may name trusted ``python3 -S -c SCRIPT`` programs at start (a checker that must never
share a process with the program it judges); they are compiled once, before the zygote forks, and a run of exactly
one of them (flags ``-s``/``-S`` only) runs in the forked warm interpreter with the observable state of a fresh
site-less one (its import path and import machinery, ``__main__``, no ``site`` builtins, no module loaded from
outside that path) instead of starting and compiling a new interpreter. Any other ``-c`` is exec'd.

The controller feeds stdin, collects stdout/stderr up to the cap and kills the program's PID namespace on
wall-clock timeout or output overflow. Both exit when the request pipe closes (parent died).

Wire format in both directions: 4-byte big-endian length + UTF-8 JSON; bytes travel base64-encoded.
"""

import base64

# Warm the modules solutions and harnesses usually import, so each fork starts with them loaded.
import bisect  # noqa: F401
import builtins
import collections  # noqa: F401
import copy  # noqa: F401
import ctypes
import datetime  # noqa: F401
import decimal  # noqa: F401
import fractions  # noqa: F401
import functools  # noqa: F401
import gc
import heapq  # noqa: F401
import importlib.machinery
import io
import itertools  # noqa: F401
import json
import math  # noqa: F401
import operator  # noqa: F401
import os
import pkgutil  # noqa: F401  (runpy.run_path imports it on every inline run)
import random
import re  # noqa: F401
import resource
import runpy
import select
import signal
import socket
import stat
import statistics  # noqa: F401
import string  # noqa: F401
import struct
import sys
import threading
import time
import traceback
import types
import typing  # noqa: F401

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 38, 22, 2
WORKDIR = "/work"
V8_EXECUTABLES = frozenset({"node", "nodejs"})  # V8 reserves address space far beyond what it uses

libc = ctypes.CDLL(None, use_errno=True)


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def read_exact(fd, n):
    chunks = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame_bytes(fd):
    header = read_exact(fd, 4)
    if header is None:
        return None
    return read_exact(fd, struct.unpack(">I", header)[0])


def read_frame(fd):
    body = read_frame_bytes(fd)
    return None if body is None else json.loads(body)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_frame(fd, obj):
    body = json.dumps(obj).encode()
    write_all(fd, struct.pack(">I", len(body)) + body)


def b64(data):
    return base64.b64encode(data).decode("ascii")


def unb64(text):
    return base64.b64decode(text.encode("ascii")) if text else b""


# --------------------------------------------------------------------------------------------- program
def load_seccomp(program):
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0), "seccomp")


def set_limits(limits, argv0):
    mb = 1024 * 1024
    cpu = max(1, int(limits["cpu_time_s"] + 0.999))
    memory = limits["memory_mb"]
    if os.path.basename(argv0) in V8_EXECUTABLES:
        memory = max(2 * memory, memory + 2048)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory * mb, memory * mb))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_size_mb"] * mb, limits["file_size_mb"] * mb))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["max_processes"], limits["max_processes"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))


def join_cgroups(name):
    """Move this process (still root, before any untrusted code) into the run's cgroups."""
    if not name.replace("-", "").isalnum() or not CGROUP_FDS:
        raise ValueError(f"cannot join cgroup {name!r}: bad name or no cgroup directories passed in")
    for dir_fd in CGROUP_FDS:
        fd = os.open(f"{name}/cgroup.procs", os.O_WRONLY, dir_fd=dir_fd)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)


def become_program(req, fds, seccomp_program, error_fd):
    """In the PID-1 child: finish isolation, then exec or run Python inline. Never returns."""
    stdin_fd, stdout_fd, stderr_fd = fds
    argv = req["argv"]
    uid = req["uid"]
    if req.get("cgroup"):
        join_cgroups(req["cgroup"])
    os.setsid()
    check(libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mount /proc")
    set_limits(req["limits"], argv[0])
    with open("/proc/self/oom_score_adj", "w") as handle:  # under memory pressure the run dies, not the server
        handle.write("1000")
    os.dup2(stdin_fd, 0)
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)
    keep = error_fd
    os.closerange(3, keep)
    os.closerange(keep + 1, 65536)
    os.set_inheritable(keep, False)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    os.chdir(WORKDIR)
    check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if seccomp_program:
        load_seccomp(seccomp_program)
    env = dict(req["env"])
    script = warm_script(argv)
    if script is not None or is_inline_python(argv):
        os.close(error_fd)  # from here on the untrusted code runs; it must not reach the setup-error channel
        if script is not None:
            run_script_inline(script, argv, env)
        run_python_inline(argv, env)
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        os.write(error_fd, f"exec {argv[0]!r} failed: {exc.strerror}".encode())
        os._exit(127)


def is_inline_python(argv):
    return (
        len(argv) >= 2
        and os.path.basename(argv[0]) in ("python3", "python")
        and argv[1].endswith(".py")
        and not argv[1].startswith("-")
    )


def warm_script(argv):
    """The compiled warm script ``argv`` runs (``python3 [-s] -S -c SCRIPT ARGS``), or ``None``."""
    if len(argv) < 3 or os.path.basename(argv[0]) not in ("python3", "python") or "-c" not in argv:
        return None
    at = argv.index("-c")
    flags = argv[1:at]
    if "-S" not in flags or not set(flags) <= {"-s", "-S"} or at + 1 >= len(argv):
        return None
    return WARM_SCRIPTS.get(argv[at + 1])


def run_script_inline(code, argv, env):
    """``python3 -S -c SCRIPT ARGS`` in the forked warm interpreter, as a fresh site-less interpreter sees itself:
    its import path, the default import machinery only, no module loaded from elsewhere (site's ``.pth`` imports,
    the warm modules, the forkserver's own ``__main__``), no builtins that ``site`` adds. Never returns."""
    sys.path[:] = ["", *SITELESS_PATH]
    sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "__module__", "") in DEFAULT_IMPORTERS]
    sys.path_hooks[:] = [h for h in sys.path_hooks if getattr(h, "__module__", "") in DEFAULT_IMPORTERS]
    sys.path_importer_cache.clear()
    roots = tuple(os.path.join(path, "") for path in SITELESS_PATH if path)
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if isinstance(where, str) and (not where.startswith(roots) or where.startswith(SITE_ROOTS)):
            del sys.modules[name]
    for name in SITE_BUILTINS:
        builtins.__dict__.pop(name, None)
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=builtins, __loader__=BUILTIN_IMPORTER, __spec__=None, __package__=None)
    main.__annotations__ = {}
    sys.modules["__main__"] = main
    fresh_process_state(["-c", *argv[argv.index("-c") + 2 :]], env)
    finish(lambda: exec(code, main.__dict__))


def run_python_inline(argv, env):
    """``python3 FILE.py ARGS`` in the forked warm interpreter, with a fresh interpreter's observable state."""
    fresh_process_state(list(argv[1:]), env)
    sys.path[0] = os.path.dirname(os.path.abspath(argv[1]))
    finish(lambda: runpy.run_path(argv[1], run_name="__main__"))


def fresh_process_state(args, env):
    """What a new interpreter would start with: ``env``, default signal handlers, a freshly seeded ``random``,
    ``sys.argv`` and standard streams of its own."""
    os.environ.clear()
    os.environ.update(env)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    random.seed()
    sys.argv = args
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), "utf-8")
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), "utf-8")
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(2, "w", closefd=False)), "utf-8", "backslashreplace", line_buffering=True
    )


def finish(run):
    """Run the program's main code as the interpreter would, then exit with its status. Never returns."""
    code = 0
    try:
        run()
    except SystemExit as exc:
        code = exit_code_of(exc)
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        threading._shutdown()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            code = code or 120
    os._exit(code)


def exit_code_of(exc):
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    try:
        print(exc.code, file=sys.stderr)
    except BaseException:
        pass
    return 1


# ------------------------------------------------------------------------------------------ supervisor
def supervise(req, fds, status_fd, seccomp_program):
    """The per-run supervisor (child of the zygote). Never returns."""
    check(libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC), "unshare")
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make mounts private")
    uid = req["uid"]
    size = f"size={req['tmpfs_mb']}m".encode()
    flags = MS_NOSUID | MS_NODEV
    check(libc.mount(b"tmpfs", WORKDIR.encode(), b"tmpfs", flags, size + b",mode=0755"), "tmpfs /work")
    check(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", flags, size + b",mode=1777"), "tmpfs /tmp")
    check(libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", flags | MS_NOEXEC, size + b",mode=1777"), "tmpfs /dev/shm")
    for relpath, content in req["files"].items():
        write_file(relpath, unb64(content), uid)
    os.chown(WORKDIR, uid, uid)
    error_r, error_w = os.pipe()
    program = os.fork()
    if program == 0:
        try:
            os.close(error_r)
            os.close(status_fd)
            become_program(req, fds, seccomp_program, error_w)
        except BaseException as exc:
            try:
                os.write(error_w, f"sandbox setup failed: {type(exc).__name__}: {exc}".encode())
            finally:
                os._exit(126)
    os.close(error_w)
    for fd in fds:
        os.close(fd)
    os.write(status_fd, (json.dumps({"pid": program}) + "\n").encode())
    _, status, usage = os.wait4(program, 0)
    setup_error = drain(error_r)
    report = {
        "wait_status": status,
        "cpu_time_s": usage.ru_utime + usage.ru_stime,
        "setup_error": setup_error.decode("utf-8", "replace"),
        "files": fetch_files(req.get("fetch_files", []), req["fetch_bytes"]),
    }
    os.write(status_fd, (json.dumps(report) + "\n").encode())
    # The controller answers at this end of file; closing before the exit lets this process's teardown (its
    # memory unmapped) overlap the next run instead of delaying this one.
    os.close(status_fd)
    os._exit(0)


def write_file(relpath, content, uid):
    path = os.path.normpath(os.path.join(WORKDIR, relpath))
    if not path.startswith(WORKDIR + "/"):
        raise ValueError(f"file path escapes the work directory: {relpath!r}")
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(content)
    os.chmod(path, 0o755)  # read-only to the program (root owns it), executable so a fetched binary can run
    while parent != WORKDIR:
        os.chown(parent, uid, uid)
        parent = os.path.dirname(parent)


def fetch_files(paths, budget):
    files = {}
    for relpath in paths:
        path = os.path.normpath(os.path.join(WORKDIR, relpath))
        if not path.startswith(WORKDIR + "/"):
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            data = read_regular_file(fd, budget + 1)
        finally:
            os.close(fd)
        if len(data) <= budget:
            files[relpath] = b64(data)
            budget -= len(data)
    return files


def read_regular_file(fd, limit):
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        return b""
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(fd, min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def drain(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            os.close(fd)
            return b"".join(chunks)
        chunks.append(chunk)


# ------------------------------------------------------------------------------------------ forkserver
class ZygoteGone(OSError):
    """The zygote died: no run can start from this forkserver any more."""


def handle(req, body, zygote):
    """Run one request (``body``: its raw frame) through a supervisor forked by the zygote; the controller's side."""
    limits = req["limits"]
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    stderr_r, stderr_w = os.pipe()
    status_r, status_w = os.pipe()
    request_r, request_w = os.pipe()
    started = time.monotonic()
    child_ends = (stdin_r, stdout_w, stderr_w, status_w, request_r)
    try:
        socket.send_fds(zygote, [b"f"], list(child_ends))
        sent = True
    except OSError:
        sent = False
    finally:
        for fd in child_ends:
            os.close(fd)
    if sent:  # written while the zygote forks (the pipe holds it, or the supervisor reads it as it goes)
        try:  # the request reaches only its own supervisor (and its program), never the zygote
            write_all(request_w, struct.pack(">I", len(body)) + body)
        except OSError:
            pass  # the supervisor died before reading it (or never started: the zygote's reply says which)
    os.close(request_w)
    try:
        reply = zygote.recv(16) if sent else b""
    except OSError:
        reply = b""
    if len(reply) != 8:
        for fd in (stdin_w, stdout_r, stderr_r, status_r):
            os.close(fd)
        raise ZygoteGone("the zygote is gone; this forkserver exits and the host starts another")
    supervisor = struct.unpack(">q", reply)[0]
    result = pump(
        unb64(req["stdin"]),
        stdin_w,
        {stdout_r: bytearray(), stderr_r: bytearray()},
        status_r,
        started + limits["wall_time_s"],
        limits["output_bytes"],
    )
    if result["unfinished"] and supervisor > 0:
        try:
            os.kill(supervisor, signal.SIGKILL)
        except ProcessLookupError:
            pass
    result["wall_time_s"] = time.monotonic() - started
    return result


def zygote_loop(control, seccomp_program):
    """Fork one supervisor per message from this pristine process; never reads a request or a response.

    Each message carries the run's pipe ends and nothing else. Children are reaped by the kernel (SIGCHLD
    ignored here; each supervisor restores it before it forks and waits for its program)."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(control, 16, 8)
        except OSError:
            os._exit(0)
        if len(fds) != 5:
            os._exit(0 if not fds else 71)  # controller closed the socket (or broke the protocol)
        stdin_r, stdout_w, stderr_w, status_w, request_r = fds
        supervisor = os.fork()
        if supervisor == 0:
            try:
                control.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                body = read_frame_bytes(request_r)
                os.close(request_r)
                if body is None:
                    os._exit(0)
                supervise(json.loads(body), (stdin_r, stdout_w, stderr_w), status_w, seccomp_program)
            except BaseException as exc:
                message = json.dumps({"supervisor_error": f"{type(exc).__name__}: {exc}"}) + "\n"
                os.write(status_w, message.encode())
            os._exit(70)
        for fd in fds:
            os.close(fd)
        control.send(struct.pack(">q", supervisor))


def start_zygote(seccomp_program):
    """Fork the zygote now, before any request exists in this process; returns the controller's socket."""
    controller_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        try:
            controller_end.close()
            for fd in (REQUEST_FD, RESPONSE_FD):
                os.close(fd)
            zygote_loop(zygote_end, seccomp_program)
        finally:
            os._exit(0)
    zygote_end.close()
    return controller_end


def pump(stdin_data, stdin_w, streams, status_r, deadline, cap):
    """Feed stdin, read stdout/stderr (capped) and status until every pipe closes; kill on limits."""
    pending = memoryview(stdin_data)
    writers = [stdin_w] if pending else []
    if not pending:
        os.close(stdin_w)
    readers = [*streams, status_r]
    for fd in [*writers, *readers]:
        os.set_blocking(fd, False)
    status_text = b""
    program = None
    killed = None
    give_up = None
    while readers:
        now = time.monotonic()
        if killed is None and now >= deadline:
            killed = "wall_time"
        if killed and program is not None and give_up is None:
            try:
                os.kill(program, signal.SIGKILL)
            except ProcessLookupError:
                pass
            give_up = now + 5.0
        if give_up is not None and now >= give_up:
            break
        wait = (give_up if give_up is not None else deadline) - now
        ready_r, ready_w, _ = select.select(readers, writers, [], max(0.0, min(wait, 1.0)))
        for fd in ready_w:
            try:
                pending = pending[os.write(fd, pending[:65536]) :]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                pending = pending[:0]
            if not pending:
                os.close(fd)
                writers.remove(fd)
        for fd in ready_r:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                readers.remove(fd)
                os.close(fd)
                continue
            if fd == status_r:
                status_text += chunk
                if program is None and b"\n" in status_text:
                    first = json.loads(status_text.split(b"\n", 1)[0])
                    program = first.get("pid")
                continue
            buffer = streams[fd]
            room = cap - len(buffer)
            buffer += chunk[: max(room, 0)]
            if len(chunk) > room and killed is None:
                killed = "output_limit"
    for fd in writers + readers:
        os.close(fd)
    report = {}
    for line in status_text.split(b"\n"):
        if line.strip():
            report.update(json.loads(line))
    stdout, stderr = (bytes(buffer) for buffer in streams.values())
    return {
        "killed": killed,
        "unfinished": give_up is not None and bool(readers),
        "stdout": b64(stdout),
        "stderr": b64(stderr),
        **report,
    }


def warm_modules(sources):
    """Import the host's trusted modules once, before any run: every forked run finds them in ``sys.modules``
    instead of compiling them again (a run that imports one by name pays nothing)."""
    import types

    for name, source in sources.items():
        module = types.ModuleType(name)
        module.__file__ = f"<warm {name}>"
        exec(compile(source, module.__file__, "exec"), module.__dict__)
        sys.modules[name] = module


def warm_scripts(sources):
    """Compile the host's trusted ``-S -c`` programs once, before any run, and learn the import path a site-less
    interpreter has (asked of one, once), so that a run of one of them starts from the forked warm interpreter."""
    if not sources:
        return
    for source in sources:
        WARM_SCRIPTS[source] = compile(source, "<string>", "exec", dont_inherit=True)
    probe_r, probe_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(probe_w, 1)
            os.execv(sys.executable, [sys.executable, "-s", "-S", "-c", SITELESS_PROBE])
        finally:
            os._exit(127)
    os.close(probe_w)
    text = drain(probe_r)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise RuntimeError("cannot learn the import path of a site-less interpreter")
    SITELESS_PATH[:] = json.loads(text)
    global SITE_ROOTS  # what site added (site-packages sits inside the standard library's directory)
    SITE_ROOTS = tuple(os.path.join(path, "") for path in sys.path if path and path not in SITELESS_PATH)


def main():
    global REQUEST_FD, RESPONSE_FD
    REQUEST_FD, RESPONSE_FD = os.dup(0), os.dup(1)
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    init = read_frame(REQUEST_FD)
    if init is None:
        return
    CGROUP_FDS[:] = [int(fd) for fd in init.get("cgroup_fds") or []]
    seccomp_program = unb64(init.get("seccomp") or "")
    warm_modules(init.get("warm_modules") or {})
    warm_scripts(init.get("warm_scripts") or [])
    del init
    gc.collect()
    gc.freeze()  # every fork shares the warm heap: the collector of a run never writes to (copies) its pages
    zygote = start_zygote(seccomp_program)
    write_frame(RESPONSE_FD, {"ready": True, "pid": os.getpid(), "python": sys.executable})
    while True:
        body = read_frame_bytes(REQUEST_FD)
        if body is None:
            return
        try:
            response = handle(json.loads(body), body, zygote)
        except ZygoteGone as exc:
            write_frame(RESPONSE_FD, {"supervisor_error": f"forkserver: {exc}", "retire": True})
            return
        except Exception as exc:
            response = {"supervisor_error": f"forkserver: {type(exc).__name__}: {exc}"}
        write_frame(RESPONSE_FD, response)


REQUEST_FD = RESPONSE_FD = -1
CGROUP_FDS = []  # directory descriptors of the rewardsmith parent cgroups, one per hierarchy
WARM_SCRIPTS = {}  # source -> code object of the host's trusted `python3 -S -c` programs
SITELESS_PATH = []  # sys.path[1:] of `python3 -s -S`
SITELESS_PROBE = "import json, sys; print(json.dumps(sys.path[1:]))"
SITE_ROOTS = ()  # the directories on this interpreter's path that are not on SITELESS_PATH
#: the interpreter's own importers (builtin, frozen, path, zip): what a site-less interpreter has
DEFAULT_IMPORTERS = frozenset({"_frozen_importlib", "_frozen_importlib_external", "zipimport"})
BUILTIN_IMPORTER = importlib.machinery.BuiltinImporter  # ``__main__.__loader__`` of ``python3 -c``
SITE_BUILTINS = ("exit", "quit", "help", "copyright", "credits", "license")

if __name__ == "__main__":
    main()
