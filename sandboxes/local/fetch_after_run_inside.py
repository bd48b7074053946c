"""Runs inside a ``bwrap-exec`` sandbox when a request asks for ``fetch_files``: the sandbox's work area is a
tmpfs that vanishes with it, so the files are read here, after the program, and handed back through a
memory file descriptor the program never holds.

argv: FD BUDGET PATHS_JSON -- PROGRAM ARGS... Standard library only (run with ``python3 -I -S -c``). The
program runs as this process's child; this process is not dumpable, so the program (same uid) can neither
trace it nor open its descriptors through ``/proc``. Exit status: the program's, a signal death as
``128 + signal`` (what bwrap itself reports).
"""

import base64
import ctypes
import json
import os
import stat
import sys

PR_SET_DUMPABLE = 4
WORKDIR = "/work"


def read_back(paths, budget):
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
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            data = os.read(fd, budget + 1)
        finally:
            os.close(fd)
        if len(data) <= budget:
            files[relpath] = base64.b64encode(data).decode("ascii")
            budget -= len(data)
    return files


def main():
    out_fd, budget, paths = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
    argv = sys.argv[5:]
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    program = os.fork()
    if program == 0:
        os.close(out_fd)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"exec {argv[0]!r} failed: {exc.strerror}\n".encode())
            os._exit(127)
    _, status = os.waitpid(program, 0)
    os.write(out_fd, json.dumps(read_back(paths, budget)).encode())
    os.close(out_fd)
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)


if __name__ == "__main__":
    main()
