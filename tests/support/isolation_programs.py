"""Programs and checks for "a run never sees another run, and nothing it makes outlives it or reaches the host's
disk", shared by every backend's tests.

Three kinds of run take part, each a whole Python program (``python3 main.py``):

- :data:`HONEST_PROGRAM` gets a token the way real runs get data (its stdin and a request file, like a checker's
  ``answer.txt``) and leaves it where honest output goes: stdout, stderr, a fetched ``answer.txt``, ``/tmp`` and
  ``/dev/shm`` files, its own memory;
- :data:`PLANTER_PROGRAM` is a hostile sample that tries to pass a token to later runs through every shared
  kernel object it can reach: SysV shared memory, message queues and semaphores, a POSIX message queue, POSIX
  shared memory, files in every writable directory, and an orphan serving the token on an abstract socket;
- :data:`SCANNER_PROGRAM` is a hostile sample that looks for any token: all of its readable memory
  (``/proc/self/maps`` + ``/proc/self/mem``) and that of every process it can see, every file it can read outside
  the read-only system, SysV IPC objects, the planter's POSIX queue, shared memory and socket. It prints JSON.

A token is :data:`TOKEN_PREFIX` + 32 hex digits; the scanner spells the prefix in pieces so that finding its own
source is not a hit, and a *control* token in its own request proves that the scan reaches memory and files.
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path

from rewardsmith.sandboxes.base import Limits, RunRequest, RunResult

TOKEN_PREFIX = "rkleak"
TOKEN_PATTERN = re.compile(TOKEN_PREFIX + "[0-9a-f]{32}")
CHANNEL = "rkchan"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_hex(16)


HONEST_PROGRAM = """
import os, sys
token = sys.stdin.read().strip()
assert open('expected.txt').read().strip() == token
print('answer', token, flush=True)
sys.stderr.write('log ' + token + '\\n')
open('answer.txt', 'w').write(token)
for path in ('/tmp/answer.txt', '/dev/shm/answer.txt'):
    try:
        open(path, 'w').write(token)
    except OSError:
        pass
kept = [token * 2]
"""

PLANTER_PROGRAM = """
import ctypes, os, socket, sys, time
token = sys.stdin.read().strip().encode()
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
done = []
# SysV shared memory, message queue and semaphore set, under a fixed key and IPC_PRIVATE
for key in (0x726B6368, 0):
    shmid = libc.shmget(key, 4096, 0o1666)
    if shmid >= 0:
        address = libc.shmat(shmid, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            ctypes.memmove(address, token, len(token))
            done.append('sysv-shm')
    msqid = libc.msgget(key, 0o1666)
    if msqid >= 0:
        message = ctypes.create_string_buffer(8 + len(token))
        ctypes.memmove(ctypes.addressof(message), (1).to_bytes(8, 'little'), 8)
        ctypes.memmove(ctypes.addressof(message) + 8, token, len(token))
        if libc.msgsnd(msqid, message, len(token), 0o4000) == 0:
            done.append('sysv-msg')
    if libc.semget(key, 4, 0o1666) >= 0:
        done.append('sysv-sem')
# a POSIX message queue
try:
    rt = libc
    mq = rt.mq_open(b'/{CHANNEL}', 0o100 | 0o1, 0o666, None)
    if mq >= 0 and rt.mq_send(mq, token, len(token), 0) == 0:
        done.append('posix-mq')
except (OSError, AttributeError):
    pass
# files in every directory it can write, POSIX shared memory among them
for directory in ('/dev/shm', '/tmp', '/var/tmp', '/run', '/dev/mqueue', os.path.expanduser('~'), os.getcwd(), '/'):
    try:
        with open(os.path.join(directory, '{CHANNEL}.txt'), 'wb') as handle:
            handle.write(token)
        done.append('file:' + directory)
    except OSError:
        pass
# an orphan that serves the token on an abstract unix socket and in its own memory (a left-over process also
# gets a pooled container replaced, so the planter runs once without it too)
read_end, write_end = os.pipe()
if '--orphan' not in sys.argv:
    os.write(write_end, b'no-orphan')
elif os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        kept = token * 3
        try:
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind('\\0{CHANNEL}')
            server.listen(4)
            os.write(write_end, b'socket')
            server.settimeout(30)
            while True:
                connection, _ = server.accept()
                connection.sendall(token)
                connection.close()
        except OSError:
            os.write(write_end, b'nosock')
        time.sleep(30)
    os._exit(0)
os.close(write_end)
done.append(os.read(read_end, 16).decode())
print(' '.join(done))
""".replace("{CHANNEL}", CHANNEL)

SCANNER_PROGRAM = """
import ctypes, json, os, re, socket, stat, sys
control = sys.stdin.read().strip()
ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # dumpable again (a uid switch cleared it): /proc/self/mem opens
pattern = re.compile(b'rk' + b'leak' + b'[0-9a-f]{32}')
found, seen = set(), {'memory_bytes': 0, 'files': 0, 'processes': 0, 'ipc': []}
def scan(data):
    found.update(match.decode() for match in pattern.findall(data))
def scan_memory(pid):
    try:
        maps = open(f'/proc/{pid}/maps').read().splitlines()
        mem = open(f'/proc/{pid}/mem', 'rb', 0)
    except OSError:
        return
    seen['processes'] += 1
    with mem:
        for line in maps:
            fields = line.split()
            if 'r' not in fields[1] or line.endswith(('[vvar]', '[vsyscall]', '[vvar_vclock]')):
                continue
            start, end = (int(x, 16) for x in fields[0].split('-'))
            position = start
            while position < end:
                size = min(8 << 20, end - position)
                try:
                    mem.seek(position)
                    data = mem.read(size + 64 if position + size < end else size)
                except (OSError, OverflowError, ValueError):
                    break
                seen['memory_bytes'] += len(data)
                scan(data)
                position += size
for name in os.listdir('/proc'):
    if name.isdigit():
        scan_memory(name)
        for part in ('cmdline', 'environ'):
            try:
                scan(open(f'/proc/{name}/{part}', 'rb').read())
            except OSError:
                pass
system = ('/proc', '/sys', '/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt/conda',
          '/root/.pyenv', os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix))
for root, dirs, files in os.walk('/'):
    if root != '/' and root.startswith(system):
        dirs[:] = []
        continue
    dirs[:] = [d for d in dirs if not os.path.join(root, d).startswith(system)]
    for name in files:
        try:
            fd = os.open(os.path.join(root, name), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                seen['files'] += 1
                scan(os.read(fd, 1 << 22))
        except OSError:
            pass
        finally:
            os.close(fd)
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
for kind in ('shm', 'msg', 'sem'):
    try:
        rows = open(f'/proc/sysvipc/{kind}').read().splitlines()[1:]
    except OSError:
        continue
    for row in rows:
        ident = int(row.split()[1])
        seen['ipc'].append(kind)
        if kind == 'shm':
            address = libc.shmat(ident, None, 0o10000)
            if address not in (None, ctypes.c_void_p(-1).value):
                scan(ctypes.string_at(address, int(row.split()[3])))
        elif kind == 'msg':
            buffer = ctypes.create_string_buffer(8 + 4096)
            while libc.msgrcv(ident, buffer, 4096, 0, 0o4000 | 0o10000) > 0:
                scan(buffer.raw)
for key in (0x726B6368,):
    for kind, getter in (('shm', libc.shmget), ('msg', libc.msgget), ('sem', libc.semget)):
        if (getter(key, 4096, 0) if kind == 'shm' else getter(key, 0) if kind == 'msg' else getter(key, 0, 0)) >= 0:
            seen['ipc'].append(kind + '-by-key')
try:
    rt = libc
    mq = rt.mq_open(b'/{CHANNEL}', 0o4000)
    if mq >= 0:
        seen['ipc'].append('posix-mq')
        buffer = ctypes.create_string_buffer(1 << 16)
        while rt.mq_receive(mq, buffer, 1 << 16, None) > 0:
            scan(buffer.raw)
except (OSError, AttributeError):
    pass
try:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(1)
    client.connect('\\0{CHANNEL}')
    seen['ipc'].append('abstract-socket')
    scan(client.recv(4096))
except OSError:
    pass
scan(json.dumps(dict(os.environ)).encode())
print(json.dumps({'control_found': control in found, 'tokens': sorted(found - {control}), **seen}))
""".replace("{CHANNEL}", CHANNEL)


def honest_request(token: str) -> RunRequest:
    return RunRequest(
        argv=["python3", "main.py"],
        files={"main.py": HONEST_PROGRAM, "expected.txt": token},
        stdin=token,
        fetch_files=["answer.txt"],
    )


def planter_request(token: str, orphan: bool = True) -> RunRequest:
    argv = ["python3", "main.py", "--orphan"] if orphan else ["python3", "main.py"]
    return RunRequest(argv=argv, files={"main.py": PLANTER_PROGRAM}, stdin=token)


def scanner_request(control: str) -> RunRequest:
    limits = Limits(wall_time_s=60, cpu_time_s=60, memory_mb=1024)
    return RunRequest(
        argv=["python3", "main.py"], files={"main.py": SCANNER_PROGRAM, "control.txt": control}, stdin=control,
        limits=limits,
    )  # fmt: skip


def scanner_report(result: RunResult) -> dict:
    """The scanner's JSON; fails the test with the run's own words when it did not finish."""
    assert result.ok, (result.status, result.message, result.stderr[-2000:])
    return json.loads(result.stdout.decode().strip().splitlines()[-1])


def shm_hog_program(segments: int, megabytes: int) -> str:
    """A wrong answer that leaves ``segments`` touched SysV segments (and one POSIX shm file) of ``megabytes`` each
    behind, never removed: memory outside the run unless the sandbox destroys them with the run."""
    return f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
size = {megabytes} << 20
made = 0
for _ in range({segments}):
    shmid = libc.shmget(0, size, 0o1600)
    if shmid < 0:
        break
    address = libc.shmat(shmid, None, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        break
    ctypes.memset(address, 1, size)
    libc.shmdt(ctypes.c_void_p(address))
    made += 1
try:
    with open('/dev/shm/rkhog', 'wb') as handle:
        handle.write(b'x' * size)
    made += 1
except OSError:
    pass
print('left', made)
raise SystemExit(1)
"""


def host_shmem_kb() -> int:
    """The host's shared memory in use (``Shmem`` of /proc/meminfo): SysV segments and tmpfs pages."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1])
    raise AssertionError("no Shmem line in /proc/meminfo")


def assert_no_run_sees_an_earlier_one(box, honest_runs: int = 3) -> dict:
    """Honest runs, then a planter, then the scanner, one after another on ``box`` (one worker: the same warm
    process or container serves them all). Returns the scanner's report after checking it."""
    tokens = [new_token() for _ in range(honest_runs)]
    for token in tokens:
        result = box.run(honest_request(token))
        assert result.ok, (result.status, result.message, result.stderr[-1000:])
        assert token.encode() in result.stdout and result.files.get("answer.txt") == token.encode()
    planted = [new_token(), new_token()]
    for token, orphan in zip(planted, (True, False), strict=True):
        planter = box.run(planter_request(token, orphan=orphan))
        assert planter.ok, (planter.status, planter.message, planter.stderr[-1000:])
        assert b"sysv-shm" in planter.stdout and b"file:" in planter.stdout, planter.stdout  # it planted, in its run
    control = new_token()
    report = scanner_report(box.run(scanner_request(control)))
    assert report["control_found"], report  # the scan reaches the run's own memory: it would see a leak
    assert report["memory_bytes"] > 1 << 20 and report["files"] >= 1, report
    leaked = sorted(set(report["tokens"]) & {*tokens, *planted})
    assert not leaked, f"tokens of earlier runs visible to a later run: {leaked}; {report}"
    assert report["tokens"] == [], report
    assert report["ipc"] == [], f"kernel objects of earlier runs visible: {report['ipc']}"
    return report


def assert_shared_memory_dies_with_each_run(box, runs: int = 4, segments: int = 3, megabytes: int = 32) -> None:
    """``runs`` wrong answers each leave ``segments + 1`` touched shared-memory objects; after the batch the host's
    shared memory is back near its baseline (not only after ``close()``)."""
    import time

    request = RunRequest(
        argv=["python3", "main.py"],
        files={"main.py": shm_hog_program(segments, megabytes)},
        limits=Limits(memory_mb=512, wall_time_s=20, cpu_time_s=20),
    )
    baseline = host_shmem_kb()
    results = box.run_batch([request] * runs)
    left = [r.stdout.decode().strip() for r in results]
    assert all(r.status.value == "runtime_error" for r in results), [(r.status, r.message) for r in results]
    assert all(line.startswith("left ") and int(line.split()[1]) >= 1 for line in left), left
    planted_kb = runs * (segments + 1) * megabytes * 1024
    deadline = time.monotonic() + 10
    while (grown := host_shmem_kb() - baseline) > planted_kb // 8 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert grown <= planted_kb // 8, f"{grown} kB of shared memory outlive the batch (planted {planted_kb} kB)"


FILL_WRITABLE_AREAS = """
import errno, json, os
report, other = {}, []
for line in open('/proc/self/mounts').read().splitlines():
    device, point, kind, options = line.split()[:4]
    if 'rw' not in options.split(',') or not os.access(point, os.W_OK) or not os.path.isdir(point):
        continue
    if kind in ('proc', 'devpts', 'devtmpfs', 'mqueue'):  # device nodes and kernel objects, no file data
        continue
    if kind != 'tmpfs':
        other.append(f'{point} ({kind})')
        continue
    written, stop = 0, None
    try:
        for n in range(400):
            with open(os.path.join(point, f'fill{n}'), 'wb') as handle:
                handle.write(b'x' * (1 << 20))
            written += 1
    except OSError as exc:
        stop = errno.errorcode.get(exc.errno)
    report[point] = [written, stop, os.statvfs(point).f_blocks * os.statvfs(point).f_frsize >> 20]
print(json.dumps({'areas': report, 'writable_non_tmpfs': other}))
"""


def assert_writable_areas_are_capped_tmpfs(box, expected_areas: set[str], file_size_mb: int = 1) -> dict:
    """Every mount the program may write is a size-capped tmpfs: filling each one stops at its cap with ``ENOSPC``
    (or ``EFBIG``), no host directory is writable, and the host's disk did not take what was written."""
    import shutil

    free_before = shutil.disk_usage("/").free
    request = RunRequest(
        argv=["python3", "main.py"],
        files={"main.py": FILL_WRITABLE_AREAS},
        limits=Limits(file_size_mb=file_size_mb, memory_mb=1024, wall_time_s=30, cpu_time_s=30),
    )
    result = box.run(request)
    assert result.ok, (result.status, result.message, result.stderr[-1000:])
    report = json.loads(result.stdout.decode().strip().splitlines()[-1])
    assert report["writable_non_tmpfs"] == [], report
    assert expected_areas <= set(report["areas"]), report
    for point, (written, stop, cap_mb) in report["areas"].items():
        assert stop in ("ENOSPC", "EFBIG") and written <= cap_mb + 1 < 400, (point, written, stop, cap_mb)
    taken = free_before - shutil.disk_usage("/").free  # 400 MiB per area if one were on disk; others write too
    assert taken < 200 << 20, f"the host's disk lost {taken >> 20} MiB during the run; {report}"
    return report
