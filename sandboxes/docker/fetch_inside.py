"""Reads requested files back out of a pooled Docker container; runs *inside* it, after the program.

``docker cp`` cannot see tmpfs mounts, so the host (``backend.py``) reads this file as package data and runs
it with ``python3 -I -S -c`` as the run user. argv[1] is a JSON list of paths relative to /sandbox, argv[2] a
byte budget. Prints a JSON map path -> base64 content of the regular files that exist and fit the budget. It
empties nothing: the host then runs the bootstrap's verified cleanup, which decides whether the container is
reused. Standard library only.
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


if __name__ == "__main__":
    main()
