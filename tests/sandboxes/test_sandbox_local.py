"""LocalSandbox behaviour: the RunRequest/RunResult contract, limits, per-run freshness, tiers, pickling."""

from __future__ import annotations

import logging
import os
import pickle
import signal
from pathlib import Path

import pytest

from rewardsmith.sandboxes.base import Limits, RunRequest, RunStatus, SandboxBackend
from rewardsmith.sandboxes.factory import open_backend
from rewardsmith.sandboxes.local.backend import LocalSandbox
from rewardsmith.sandboxes.local.cgroups import CgroupManager
from rewardsmith.sandboxes.local.forkserver_host import bwrap_command, classify_exit


@pytest.fixture(scope="module", params=["bwrap", "bwrap-exec"])
def box(request):
    sandbox = LocalSandbox(tier=request.param)
    if sandbox.tier != request.param:
        pytest.skip(f"the {request.param!r} tier is unavailable here")
    yield sandbox
    sandbox.close()


def py(code: str, **kwargs) -> RunRequest:
    return RunRequest(argv=["python3", "main.py"], files={"main.py": code}, **kwargs)


def test_is_a_sandbox_backend_and_opens_by_name():
    backend = open_backend("local")
    assert isinstance(backend, SandboxBackend)
    assert backend.name == "local"
    with pytest.raises(ValueError, match="unknown sandbox backend"):
        open_backend("nope")


@pytest.mark.parametrize(
    ("code", "stdin", "status", "exit_code", "stdout"),
    [
        ("print(input()[::-1])", "abc\n", RunStatus.OK, 0, b"cba\n"),
        ("import sys\nsys.exit(3)", "", RunStatus.RUNTIME_ERROR, 3, b""),
        ("raise SystemExit('bye')", "", RunStatus.RUNTIME_ERROR, 1, b""),
        ("raise ValueError('x')", "", RunStatus.RUNTIME_ERROR, 1, b""),
        ("import sys\nprint(sys.argv, __name__)", "", RunStatus.OK, 0, b"['main.py'] __main__\n"),
        ("print(sum(map(int, open(0).read().split())))", "1 2\n3", RunStatus.OK, 0, b"6\n"),
    ],
)
def test_python_programs_behave_like_a_fresh_interpreter(box, code, stdin, status, exit_code, stdout):
    result = box.run(py(code, stdin=stdin))
    assert (result.status, result.exit_code, result.stdout) == (status, exit_code, stdout), result.stderr


def test_tracebacks_reach_stderr(box):
    result = box.run(py("def f():\n    raise KeyError('boom')\nf()"))
    assert b"KeyError: 'boom'" in result.stderr


def test_exec_path_runs_other_programs_with_stdin(box):
    result = box.run(RunRequest(argv=["sh", "-c", "read x; echo got-$x; exit 4"], stdin="hi\n"))
    assert (result.status, result.exit_code, result.stdout) == (RunStatus.RUNTIME_ERROR, 4, b"got-hi\n")


def test_missing_executable_is_an_infrastructure_failure(box):
    if box.tier == "bwrap-exec":
        pytest.skip("bwrap reports a failed exec like a program exit (documented); the probe covers python3")
    result = box.run(RunRequest(argv=["definitely-not-installed-rk"]))
    assert result.status is RunStatus.SANDBOX_ERROR and "failed" in result.message


def test_each_run_starts_from_a_fresh_filesystem(box):
    first = box.run(py("open('left.txt','w').write('x'); open('/tmp/left.txt','w').write('x'); print('ok')"))
    second = box.run(py("import os\nprint(os.listdir('.'), os.listdir('/tmp'))"))
    assert first.stdout == b"ok\n"
    assert second.stdout == b"['main.py'] []\n"


def test_files_are_written_and_fetched_back(box):
    request = RunRequest(
        argv=["python3", "main.py"],
        files={
            "main.py": "open('out.bin','wb').write(open('data/in.bin','rb').read()[::-1])",
            "data/in.bin": b"\x00\x01\x02",
        },
        fetch_files=["out.bin", "missing.txt"],
    )
    result = box.run(request)
    assert result.ok, result.stderr
    assert result.files == {"out.bin": b"\x02\x01\x00"}


def test_a_shipped_file_larger_than_the_file_size_limit_arrives_whole(box):
    """The limit binds what the program writes, not what it is given (a compiled binary can be large)."""
    files = {"main.py": "import os\nprint(os.path.getsize('big.bin'))", "big.bin": b"\x7f" * (3 << 20)}
    result = box.run(RunRequest(argv=["python3", "main.py"], files=files, limits=Limits(file_size_mb=1)))
    assert (result.status, result.stdout) == (RunStatus.OK, b"3145728\n"), result.stderr[-500:]


def test_file_paths_cannot_escape_the_workdir(box):
    result = box.run(RunRequest(argv=["true"], files={"../../etc/evil": "x"}))
    assert result.status is RunStatus.SANDBOX_ERROR


def test_environment_is_cleared(box, monkeypatch):
    monkeypatch.setenv("RK_LEAK_CHECK", "visible")
    result = box.run(py("import os\nprint(sorted(os.environ))"))
    assert b"RK_LEAK_CHECK" not in result.stdout
    assert b"PATH" in result.stdout


def test_stderr_and_stdout_are_capped_separately(box):
    result = box.run(py("import sys\nsys.stderr.write('e' * 5000)\nprint('x' * 100)", limits=Limits(output_bytes=4096)))
    assert result.status is RunStatus.OUTPUT_LIMIT
    assert len(result.stderr) == 4096


def test_cpu_limit_is_a_timeout(box):
    result = box.run(py("while True: pass", limits=Limits(cpu_time_s=1, wall_time_s=60)))
    assert result.status is RunStatus.TIMEOUT
    assert result.message == "CPU-time limit", "RLIMIT_CPU, not the far wall-clock limit, stopped it"
    if box.tier == "bwrap":
        assert 1.0 <= result.cpu_time_s < 3.0


def test_network_requests_are_refused_not_granted(box):
    result = box.run(py("print(1)", limits=Limits(network=True)))
    assert result.status is RunStatus.SANDBOX_ERROR


def test_run_batch_keeps_order_and_runs_concurrently(box):
    requests = [py(f"import time\ntime.sleep(0.3)\nprint({i})") for i in range(4)]
    results = box.run_batch(requests, concurrency=4)
    assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(4)]


def test_pickles_without_processes(box):
    clone = pickle.loads(pickle.dumps(box))
    try:
        assert clone.run(py("print(7)")).stdout == b"7\n"
    finally:
        clone.close()


def test_a_killed_forkserver_is_replaced_and_reported_as_sandbox_error():
    with LocalSandbox(tier="bwrap") as sandbox:
        assert sandbox.run(py("print(1)")).ok
        server = sandbox._all[0]
        os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait()
        result = sandbox.run(py("print(2)"))
        assert result.ok and result.stdout == b"2\n", "a dead idle forkserver is replaced before the run"


def test_a_dead_zygote_retires_its_forkserver():
    """The zygote (the pristine process every run forks from) dies: its forkserver retires, and the run that found
    out (its program never started) runs again on a fresh one."""
    with LocalSandbox(tier="bwrap", concurrency=1) as sandbox:
        assert sandbox.run(py("print(1)")).ok
        parents, interpreters = {}, set()
        for entry in Path("/proc").iterdir():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except (OSError, ValueError):
                continue
            if b"bwrap" not in argv[0] and b"/opt/rewardsmith/forkserver.py" in argv:
                interpreters.add(int(entry.name))
        ours = {sandbox._all[0].process.pid}
        while grown := {pid for pid, parent in parents.items() if parent in ours} - ours:
            ours |= grown
        zygotes = [pid for pid in interpreters & ours if parents[pid] in interpreters]
        assert len(zygotes) == 1, (zygotes, interpreters & ours)
        os.kill(zygotes[0], signal.SIGKILL)
        dead_server = sandbox._all[0]
        result = sandbox.run(py("print(2)"))
        assert result.ok and result.stdout == b"2\n", result.message
        assert dead_server not in sandbox._all and len(sandbox._all) == 1


def test_weak_tier_runs_only_when_opted_in():
    with pytest.raises(ValueError, match="isolation='weak'"):
        LocalSandbox(tier="subprocess")
    with LocalSandbox(tier="subprocess", isolation="weak") as weak:
        assert weak.tier == "subprocess"
        assert "WEAK ISOLATION" in weak.isolation_warning
        assert weak.run(py("print(input())", stdin="w")).stdout == b"w\n"
        assert weak.run(py("while True: pass", limits=Limits(wall_time_s=1))).status is RunStatus.TIMEOUT


def test_auto_tier_without_bwrap_refuses_unless_weak_is_opted_in(caplog, monkeypatch, tmp_path):
    import rewardsmith.sandboxes.local.backend as local

    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH: the real lookup finds nothing
    with LocalSandbox() as strong:
        assert strong.tier == "unavailable" and strong.isolation_warning is None
        result = strong.run(py("print(1)"))
        assert result.status is RunStatus.SANDBOX_ERROR
        assert "apt-get install bubblewrap" in result.message and "isolation='weak'" in result.message
    local._warned.discard("weak-tier")
    with caplog.at_level(logging.WARNING, logger="rewardsmith.sandboxes.local.backend"):
        first, second = LocalSandbox(isolation="weak"), LocalSandbox(isolation="weak")
        assert first.tier == "subprocess" and second.tier == "subprocess"
        assert first.run(py("print(input())", stdin="w")).stdout == b"w\n"
    warnings = [r for r in caplog.records if "WEAK ISOLATION" in r.getMessage()]
    assert len(warnings) == 1
    first.close()
    second.close()


MEMORY_SPLIT = """
import os, time
children = []
for _ in range({n}):
    pid = os.fork()
    if pid == 0:
        block = bytearray({mb} << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(1.5)
        os._exit(0)
    children.append(pid)
print([os.waitpid(pid, 0)[1] for pid in children])
"""


def needs_memory_cgroup(box):
    if "memory" not in box.cgroup_controllers:
        pytest.skip("no memory cgroup here: a run's total memory is bounded by rlimits only")


def test_memory_bomb_split_across_processes_is_stopped_by_the_cgroup(box):
    needs_memory_cgroup(box)
    code = MEMORY_SPLIT.format(n=6, mb=100)  # 600 MiB in all, each process far under RLIMIT_AS
    result = box.run(py(code, limits=Limits(memory_mb=256, max_processes=16, wall_time_s=20)))
    assert result.status is RunStatus.MEMORY, (result.status, result.message, result.stdout, result.stderr[-300:])


def test_a_program_just_under_the_memory_limit_succeeds(box):
    needs_memory_cgroup(box)
    code = MEMORY_SPLIT.format(n=3, mb=60)  # 180 MiB in all under a 256 MiB ceiling
    result = box.run(py(code, limits=Limits(memory_mb=256, max_processes=16, wall_time_s=20)))
    assert result.status is RunStatus.OK, (result.status, result.message, result.stderr[-300:])
    assert result.stdout == b"[0, 0, 0]\n"
    single = box.run(py("b = bytearray(180 << 20)\nb[::4096] = b'x' * len(b[::4096])\nprint(len(b) >> 20)"))
    assert single.status is RunStatus.OK and single.stdout == b"180\n", single.stderr[-300:]


def test_run_cgroups_are_removed_after_the_run(box):
    if not box.cgroup_controllers:
        pytest.skip("no cgroups here")
    parents = [hierarchy.parent for hierarchy in box._cgroups.hierarchies]
    assert box.run(py("import os\nos.fork() or print(open('/proc/self/cgroup').read())")).ok
    mine = [name for parent in parents for name in os.listdir(parent) if name.startswith(f"{os.getpid()}-")]
    assert mine == []


def test_without_cgroups_the_manager_reports_what_is_missing(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("")
    manager = CgroupManager(mounts_file=str(empty), own_file=str(empty))
    assert not manager.available and manager.controllers == frozenset()
    assert any("memory" in problem for problem in manager.problems)
    assert any("pids" in problem for problem in manager.problems)


@pytest.mark.parametrize("version", [1, 2])
def test_cgroup_layout_and_limits_on_a_fake_hierarchy(tmp_path, version):
    """Where the parent and run cgroups go and what is written there, on plain directories standing in for
    cgroupfs (v2: one unified tree with ``memory`` and ``pids`` delegated; v1: one tree per controller)."""
    mounts, own = tmp_path / "mounts", tmp_path / "cgroup"
    if version == 2:
        (tmp_path / "v2" / "job").mkdir(parents=True)
        (tmp_path / "v2" / "job" / "cgroup.controllers").write_text("cpu memory pids\n")
        mounts.write_text(f"cgroup2 {tmp_path / 'v2'} cgroup2 rw 0 0\n")
        own.write_text("0::/job\n")
    else:
        for controller in ("memory", "pids"):
            (tmp_path / controller / "job").mkdir(parents=True)
        mounts.write_text(
            f"cgroup {tmp_path / 'memory'} cgroup rw,memory 0 0\ncgroup {tmp_path / 'pids'} cgroup rw,pids 0 0\n"
        )
        own.write_text("4:memory:/job\n8:pids:/job\n0::/\n")
    manager = CgroupManager(mounts_file=str(mounts), own_file=str(own))
    assert manager.controllers == ({"cpu", "memory", "pids"} if version == 2 else {"memory", "pids"}), manager.problems
    run = manager.create(memory_mb=100, max_tasks=7)
    written = {path.name: path.read_text() for _, d in run.dirs for path in Path(d).iterdir()}
    if version == 2:
        assert (tmp_path / "v2" / "job" / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
        assert Path(run.dirs[0][1]).parent == tmp_path / "v2" / "job" / "rewardsmith"
        assert written == {"memory.max": str(100 << 20), "pids.max": "7", "cpu.max": "100000 100000"}
    else:
        assert {Path(d).parent for _, d in run.dirs} == {
            tmp_path / c / "job" / "rewardsmith" for c in ("memory", "pids")
        }
        assert written == {"memory.limit_in_bytes": str(100 << 20), "pids.max": "7"}
    assert all(Path(d).name.startswith(f"{os.getpid()}-") for _, d in run.dirs)


def test_bwrap_command_asks_for_full_isolation():
    cmd = bwrap_command("/usr/bin/bwrap", "/usr/bin/python3")
    for flag in ("--unshare-net", "--unshare-pid", "--unshare-ipc", "--clearenv", "--new-session"):
        assert flag in cmd
    assert cmd[cmd.index("--cap-drop") + 1] == "ALL"
    assert "/home" not in cmd and "--bind" not in cmd, "nothing from the host is mounted writable"


@pytest.mark.parametrize(
    ("wait_status", "killed", "cpu", "stderr", "expected"),
    [
        (0, None, 0.1, b"", RunStatus.OK),
        (1 << 8, None, 0.1, b"", RunStatus.RUNTIME_ERROR),
        (signal.SIGXCPU, None, 2.0, b"", RunStatus.TIMEOUT),
        (signal.SIGKILL, None, 5.0, b"", RunStatus.TIMEOUT),
        (signal.SIGKILL, None, 0.1, b"", RunStatus.RUNTIME_ERROR),
        (signal.SIGKILL, "wall_time", 0.1, b"", RunStatus.TIMEOUT),
        (signal.SIGKILL, "output_limit", 0.1, b"", RunStatus.OUTPUT_LIMIT),
        (1 << 8, None, 0.1, b"MemoryError\n", RunStatus.MEMORY),
        (signal.SIGABRT, None, 0.1, b"terminate called after throwing 'std::bad_alloc'", RunStatus.MEMORY),
    ],
)
def test_exit_classification(wait_status, killed, cpu, stderr, expected):
    common = {"stdout": b"", "stderr": stderr, "wall_time_s": 0.1, "cpu_time_s": cpu, "files": {}}
    assert classify_exit(wait_status, killed, Limits(cpu_time_s=2), common).status is expected


@pytest.mark.parametrize(("wait_status", "killed"), [(0, None), (signal.SIGKILL, None), (1 << 8, None)])
def test_a_cgroup_oom_kill_is_a_memory_verdict(wait_status, killed):
    common = {"stdout": b"", "stderr": b"", "wall_time_s": 0.1, "cpu_time_s": 0.1, "files": {}}
    assert classify_exit(wait_status, killed, Limits(), common, memory_killed=True).status is RunStatus.MEMORY
    wall = classify_exit(signal.SIGKILL, "wall_time", Limits(), common, memory_killed=True)
    assert wall.status is RunStatus.TIMEOUT
