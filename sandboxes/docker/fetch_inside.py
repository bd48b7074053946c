"""Reads requested files back out of a pooled Docker container; runs *inside* it, after the program.

``docker cp`` cannot see tmpfs mounts, so the host (``backend.py``) reads this file as package data and runs
it with ``python3 -I -S -c`` as the run user. argv[1] is a JSON list of paths relative to /sandbox, argv[2] a
byte budget, argv[3] a JSON list of work areas to empty afterwards (the run left them for this read, and
their memory must not outlive it). Prints a JSON map path -> base64 content of the regular files that exist
and fit the budget. Standard library only.
"""

import base64
import json
import os
import stat
import sys


def main():
    budget, files = int(sys.argv[2]), {}
    for rel in json.loads(sys.argv[1]):
        path = os.path.normpath(os.path.join("/sandbox", rel))
        if not path.startswith("/sandbox/"):
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        chunks, size = [], 0
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                while size <= budget:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    size += len(chunk)
            else:
                size = budget + 1
        finally:
            os.close(fd)
        if size <= budget:
            files[rel] = base64.b64encode(b"".join(chunks)).decode("ascii")
            budget -= size
    sys.stdout.write(json.dumps(files))
    sys.stdout.flush()
    for area in json.loads(sys.argv[3]) if len(sys.argv) > 3 else ():
        wipe(area)


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


if __name__ == "__main__":
    main()
