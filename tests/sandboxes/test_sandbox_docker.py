"""DockerSandbox against a real Docker engine and the offline-built ``rewardsmith-sandbox`` image."""

from __future__ import annotations

import hashlib
import pickle
import threading
import time

import pytest

from rewardsmith.sandboxes.base import Limits, RunRequest, RunStatus
from rewardsmith.sandboxes.docker.backend import RUN_UID, DockerSandbox, _verdict
from rewardsmith.sandboxes.fusion.wire import program_request
from tests.support.docker_engine import require_docker


@pytest.fixture(scope="module")
def box():
    require_docker()
    sandbox = DockerSandbox(concurrency=2)
    yield sandbox
    sandbox.close()


def pool_ids(sandbox: DockerSandbox) -> set[str]:
    return {c.handle.id for c in list(sandbox._idle.queue)}


def py(code: str, stdin: str | bytes = b"", **limits) -> RunRequest:
    return RunRequest(argv=["python3", "main.py"], files={"main.py": code}, stdin=stdin, limits=Limits(**limits))


@pytest.mark.docker
def test_ok_with_files_and_stdin(box):
    code = "import sys\nprint(open('pkg/data.txt').read(), sys.stdin.read()[::-1])"
    result = box.run(
        RunRequest(argv=["python3", "main.py"], files={"main.py": code, "pkg/data.txt": b"from-file"}, stdin="nidts")
    )
    assert result.status is RunStatus.OK, result
    assert result.stdout == b"from-file stdin\n"
    assert result.exit_code == 0 and result.stderr == b""


@pytest.mark.docker
def test_fetch_files_are_read_back_from_the_tmpfs_workdir(box):
    code = "import os\nos.makedirs('out')\nopen('out/r.bin', 'wb').write(bytes(range(256)))\n"
    code += "os.symlink('/etc/passwd', 'ln')"
    request = RunRequest(
        argv=["python3", "main.py"], files={"main.py": code}, fetch_files=["out/r.bin", "ln", "missing", "../etc/hosts"]
    )
    result = box.run(request)
    assert result.status is RunStatus.OK, result
    assert result.files == {"out/r.bin": bytes(range(256))}, "only regular files inside the workdir come back"
    assert box.run(py("print(1)")).files == {}


@pytest.mark.docker
def test_large_stdin_the_program_never_reads_does_not_block(box):
    result = box.run(py("print('done')", stdin=b"x" * (4 << 20)))
    assert result.status is RunStatus.OK and result.stdout == b"done\n"


@pytest.mark.docker
def test_stdin_read_to_eof_is_whole_before_the_program_starts(box):
    """A program reading to EOF never waits on the engine passing the host's half-close on (a race under load):
    its stdin is all there when it starts, with its end, in every one of concurrent runs."""
    data = bytes(range(256)) * 4096  # 1 MiB
    code = (
        "import hashlib, os, sys\n"
        "size_at_start = os.fstat(0).st_size\n"
        "print(size_at_start, hashlib.sha256(sys.stdin.buffer.read()).hexdigest())"
    )
    requests = [py(code, stdin=data, wall_time_s=10) for _ in range(8)]
    results = box.run_batch(requests)
    expected = f"{len(data)} {hashlib.sha256(data).hexdigest()}\n".encode()
    assert [r.stdout for r in results] == [expected] * 8, [r.message or r.stderr for r in results]
    node = RunRequest(
        argv=["node", "main.js"],
        files={"main.js": "process.stdout.write(String(require('fs').readFileSync(0).length))"},
        stdin=data,
        limits=Limits(wall_time_s=10),
    )
    assert box.run(node).stdout == str(len(data)).encode()


@pytest.mark.docker
def test_runtime_error_exit_code_and_stderr(box):
    result = box.run(py("import sys\nprint('partial')\nsys.stderr.write('bad\\n')\nsys.exit(3)"))
    assert (result.status, result.exit_code, result.stdout, result.stderr) == (
        RunStatus.RUNTIME_ERROR,
        3,
        b"partial\n",
        b"bad\n",
    )
    missing = box.run(RunRequest(argv=["no-such-binary"]))
    assert missing.status is RunStatus.RUNTIME_ERROR and missing.exit_code == 127


@pytest.mark.docker
def test_wall_timeout_inside_the_container_keeps_the_container(box):
    before = pool_ids(box)
    started = time.monotonic()
    result = box.run(py("import time\ntime.sleep(60)", wall_time_s=1.0))
    assert result.status is RunStatus.TIMEOUT, result
    assert 1.0 <= time.monotonic() - started < 4
    assert pool_ids(box) == before, "a plain timeout is enforced in the container, which stays in the pool"


@pytest.mark.docker
@pytest.mark.slow
def test_cpu_limit(box):
    result = box.run(py("while True: pass", wall_time_s=20, cpu_time_s=1))
    assert result.status is RunStatus.TIMEOUT, result
    assert result.wall_time_s < 10


@pytest.mark.docker
def test_memory_limit_read_from_the_cgroup(box):
    result = box.run(py("x = bytearray(600 << 20)\nprint(len(x))", memory_mb=128))
    assert result.status is RunStatus.MEMORY, result
    fine = box.run(py("x = bytearray(50 << 20)\nprint(len(x) >> 20)", memory_mb=256))
    assert fine.status is RunStatus.OK and fine.stdout == b"50\n"


@pytest.mark.docker
def test_output_flood_is_capped_and_the_container_replaced(box):
    before = pool_ids(box)
    result = box.run(py("while True: print('y' * 1000)", output_bytes=10_000))
    assert result.status is RunStatus.OUTPUT_LIMIT
    assert len(result.stdout) == 10_000
    after = pool_ids(box)
    assert len(after) == 2 and after != before
    assert box.run(py("print('next')")).stdout == b"next\n"


@pytest.mark.docker
@pytest.mark.slow
def test_overrun_past_the_host_deadline_kills_the_container(box):
    """A program that kills the in-container bootstrap and timeout (``kill(-1)`` from a setsid child that keeps
    stdout open) is stopped by the host's own deadline: the container is killed and replaced."""
    code = (
        "import os, signal, time\nif os.fork() == 0:\n    os.setsid()\n    os.kill(-1, signal.SIGKILL)\n"
        "    time.sleep(60)\nelse:\n    print('parent done', flush=True)\n    time.sleep(60)"
    )
    sandbox = DockerSandbox(concurrency=1, grace_s=1.0)
    try:
        assert sandbox.run(py("print(1)")).ok
        before = pool_ids(sandbox)
        started = time.monotonic()
        result = sandbox.run(py(code, wall_time_s=1.0))
        assert result.status is RunStatus.TIMEOUT
        assert time.monotonic() - started < 8
        assert pool_ids(sandbox) != before, "the container was replaced"
        look = (
            "import os\ncmds = []\nfor p in os.listdir('/proc'):\n    try:\n"
            "        cmds.append(open(f'/proc/{p}/cmdline').read())\n    except OSError:\n        pass\n"
            "print(cmds.count('python3\\x00main.py\\x00'))"
        )
        leftover = sandbox.run(RunRequest(argv=["python3", "-c", look]))
        assert leftover.stdout == b"0\n", "the overrunning program and its setsid child are gone"
    finally:
        sandbox.close()


@pytest.mark.docker
def test_an_orphan_holding_stdout_dies_when_its_program_ends(box):
    """The bootstrap outlives the program and kills what it left: the run ends with the program, and the same
    container serves the next run."""
    code = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nprint('parent done')"
    assert box.run(py("print(1)")).ok
    before = pool_ids(box)
    started = time.monotonic()
    result = box.run(py(code))
    assert (result.status, result.stdout) == (RunStatus.OK, b"parent done\n")
    assert time.monotonic() - started < 5
    assert pool_ids(box) == before, "the container was kept"


@pytest.mark.docker
@pytest.mark.slow
def test_runs_do_not_see_each_others_files_or_processes(box):
    plant = (
        "import os, subprocess\nopen('/sandbox/left.txt', 'w').write('x')\nopen('/tmp/left.txt', 'w').write('x')\n"
        "subprocess.Popen(['sleep', '300'], start_new_session=True)\nprint('planted')"
    )
    assert box.run(py(plant)).stdout == b"planted\n"
    look = (
        "import os\nprocs = [open(f'/proc/{p}/cmdline').read() for p in os.listdir('/proc') if p.isdigit()]\n"
        "print(sorted(os.listdir('/sandbox')), sorted(os.listdir('/tmp')), any('sleep\\x00300' in c for c in procs))"
    )
    for _ in range(2):  # whichever container the next runs land in
        result = box.run(py(look))
        assert result.stdout == b"['main.py'] [] False\n", result


@pytest.mark.docker
def test_programs_run_unprivileged_in_a_locked_down_container(box):
    code = (
        "import os\nstatus = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines())\n"
        "print(os.getuid(), status['CapEff'].strip(), status['NoNewPrivs'].strip())\n"
        "for path in ('/etc/passwd', '/usr/x'):\n    try:\n        open(path, 'a')\n        print('WROTE')\n"
        "    except OSError as exc:\n        print(exc.errno)"
    )
    result = box.run(py(code))
    uid, caps, no_new_privs, passwd_errno, usr_errno = result.stdout.split()
    assert (uid, caps, no_new_privs) == (str(RUN_UID).encode(), b"0" * 16, b"1")
    assert passwd_errno in (b"13", b"30") and usr_errno == b"30"  # EACCES / EROFS: nothing written
    container = next(iter(box._idle.queue)).handle
    container.reload()
    host_config = container.attrs["HostConfig"]
    assert host_config["NetworkMode"] == "none"
    assert host_config["ReadonlyRootfs"] is True
    assert host_config["CapDrop"] == ["ALL"]
    assert host_config["Init"] is True
    assert "no-new-privileges" in host_config["SecurityOpt"]
    assert host_config["PidsLimit"] and host_config["Memory"]
    assert container.attrs["Config"]["User"] == "65534:65534"


@pytest.mark.docker
def test_cpp_and_nodejs(box):
    cpp = box.run(
        program_request(
            '#include <cstdio>\nint main(){int a,b;scanf("%d %d",&a,&b);printf("%d\\n",a*b);}', "cpp", stdin="6 7"
        )
    )
    assert cpp.status is RunStatus.OK and cpp.stdout == b"42\n", cpp
    node = box.run(
        program_request(
            "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(s.trim()+'!'))", "nodejs", stdin="hi"
        )
    )
    assert node.status is RunStatus.OK and node.stdout == b"hi!\n", node


@pytest.mark.docker
def test_batch_order_and_pool_bound(box):
    code = "import sys, time\ntime.sleep(0.3)\nprint(sys.stdin.read())"
    started = time.monotonic()
    results = box.run_batch([py(code, stdin=str(i)) for i in range(4)], concurrency=4)
    assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(4)]
    assert time.monotonic() - started >= 0.6, "at most concurrency programs run at once"


@pytest.mark.docker
@pytest.mark.slow
def test_container_killed_from_outside_is_a_sandbox_error(box):
    """A real infrastructure fault: the container disappears mid-run. Never a program verdict."""
    sandbox = DockerSandbox(concurrency=1)
    try:
        assert sandbox.run(py("print(1)")).ok
        victim = next(iter(sandbox._idle.queue)).handle
        killer = threading.Timer(1.0, lambda: victim.kill())
        killer.start()
        result = sandbox.run(py("import time\ntime.sleep(20)", wall_time_s=15))
        killer.join()
        assert result.status is RunStatus.SANDBOX_ERROR, result
        assert sandbox.run(py("print('recovered')")).stdout == b"recovered\n"
    finally:
        sandbox.close()


@pytest.mark.docker
def test_missing_image_is_a_sandbox_error(box):
    sandbox = DockerSandbox(image="rewardsmith-no-such-image:none")
    result = sandbox.run(py("print(1)"))
    assert result.status is RunStatus.SANDBOX_ERROR and "no-such-image" in result.message


@pytest.mark.docker
def test_close_removes_the_pool():
    require_docker()
    sandbox = DockerSandbox(concurrency=1)
    assert sandbox.run(py("print(1)")).ok
    ids = pool_ids(sandbox)
    client = sandbox.client
    sandbox.close()
    import docker

    for container_id in ids:
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(container_id)


# --- no engine needed ----------------------------------------------------------------------------------------------


def test_unreachable_engine_is_a_sandbox_error():
    sandbox = DockerSandbox(base_url="unix:///nonexistent/docker.sock", start_timeout_s=5)
    result = sandbox.run(py("print(1)"))
    assert result.status is RunStatus.SANDBOX_ERROR and result.infrastructure_failure


def test_network_is_never_granted():
    result = DockerSandbox().run(RunRequest(argv=["true"], limits=Limits(network=True)))
    assert result.status is RunStatus.SANDBOX_ERROR and "network" in result.message


def test_pickles_without_its_pool():
    sandbox = DockerSandbox(concurrency=3, cpus=0.5)
    clone = pickle.loads(pickle.dumps(sandbox))
    assert clone.config == sandbox.config and clone._client is None


@pytest.mark.parametrize(
    ("exit_code", "wall", "oom", "expected"),
    [
        (0, 0.1, False, RunStatus.OK),
        (1, 0.1, False, RunStatus.RUNTIME_ERROR),
        (137, 0.2, True, RunStatus.MEMORY),
        (137, 2.0, False, RunStatus.TIMEOUT),  # killed by the in-container timeout at the wall limit
        (137, 0.2, False, RunStatus.RUNTIME_ERROR),  # SIGKILL early and no OOM: the program's own doing
        (152, 1.0, False, RunStatus.TIMEOUT),  # SIGXCPU
        (153, 0.1, False, RunStatus.RUNTIME_ERROR),  # SIGXFSZ
        (None, 0.1, False, RunStatus.SANDBOX_ERROR),
    ],
)
def test_verdict_table(exit_code, wall, oom, expected):
    assert _verdict(exit_code, wall, Limits(wall_time_s=2.0, cpu_time_s=5.0), oom=oom).status is expected


@pytest.mark.docker
def test_sandboxfusion_server_on_the_docker_backend(box):
    """``rewardsmith sandbox serve --backend docker`` in-process: a SandboxFusion client runs nodejs in a container."""
    from rewardsmith.sandboxes.fusion.client import RemoteSandbox
    from rewardsmith.sandboxes.fusion.server import make_server

    server = make_server(box, port=0, concurrency=2)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        remote = RemoteSandbox(f"http://127.0.0.1:{server.server_address[1]}", retries=0)
        result = remote.run(program_request("console.log([1,2,3].map(x => x * 2).join(','))", "nodejs"))
        assert result.status is RunStatus.OK and result.stdout == b"2,4,6\n", result
        flood = remote.run(py("while True: print('z' * 1000)", output_bytes=5000))
        assert flood.status is RunStatus.OUTPUT_LIMIT
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.docker
def test_ci_script_and_build_image_are_idempotent(box):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / ".ci" / "docker.sh"
    before = box.client.images.get("rewardsmith-sandbox:latest").id
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and f"rewardsmith-sandbox:latest {before}" in proc.stdout, proc.stdout + proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "rewardsmith", "sandbox", "build-image"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[1] == box.client.images.get("rewardsmith-sandbox:latest").id


@pytest.mark.docker
def test_an_image_built_from_another_package_list_is_rebuilt(box):
    import io
    import tarfile

    from rewardsmith.sandboxes.docker.image import SPEC_LABEL, ImageSpec, build_image

    name = "rewardsmith-sandbox-stale:test"
    empty = io.BytesIO()
    with tarfile.open(fileobj=empty, mode="w"):
        pass
    box.client.api.import_image_from_data(
        empty.getvalue(), repository=name.split(":")[0], tag="test", changes=[f"LABEL {SPEC_LABEL}=another-list"]
    )
    stale = box.client.images.get(name).id
    try:
        spec = ImageSpec(image=name)
        rebuilt = build_image(spec, client=box.client)
        assert rebuilt != stale
        assert box.client.images.get(name).labels[SPEC_LABEL] == spec.cache_key
        assert build_image(spec, client=box.client) == rebuilt  # current now: returned as it is
    finally:
        box.client.images.remove(name, force=True)


def test_image_cache_key_follows_the_content(tmp_path):
    from rewardsmith.sandboxes.docker.image import ImageSpec

    base = ImageSpec(cache_dir=tmp_path)
    assert base.rootfs_tarball.parent == tmp_path
    assert ImageSpec(cache_dir=tmp_path, packages=("python3",)).cache_key != base.cache_key
    assert ImageSpec(cache_dir=tmp_path, suite="trixie").cache_key != base.cache_key
    assert ImageSpec(cache_dir=tmp_path, image="other:tag").cache_key == base.cache_key  # same root filesystem


@pytest.mark.docker
def test_built_image_defaults_to_the_unprivileged_user(box):
    config = box.client.images.get(box.config.image).attrs["Config"]
    assert config["User"] == f"{RUN_UID}:{RUN_UID}"
    assert config["WorkingDir"] == "/sandbox"
