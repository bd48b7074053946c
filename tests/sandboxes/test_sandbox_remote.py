"""RemoteSandbox against a real ``rewardsmith sandbox serve`` on 127.0.0.1, plus the SandboxFusion protocol mapping.

A stand-in HTTP server is used only for faults the real server cannot be made to produce (5xx, malformed bodies)
and to count requests in flight.
"""

from __future__ import annotations

import base64
import json
import pickle
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rewardsmith.sandboxes.base import Limits, RunRequest, RunStatus
from rewardsmith.sandboxes.fusion.client import RemoteSandbox
from rewardsmith.sandboxes.fusion.server import ServerPolicy, limits_for
from rewardsmith.sandboxes.fusion.wire import (
    RunCodeRequest,
    RunCodeResponse,
    fusion_request_for,
    program_request,
    run_result_from_response,
)
from tests.support.sandbox_server import sandbox_server

CPP_SUM = "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<std::endl;return 0;}\n"


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """``rewardsmith sandbox serve`` on a free port, local backend."""
    with sandbox_server(max_run_timeout=5) as url:
        yield url


@pytest.fixture(scope="module")
def remote(server_url: str) -> RemoteSandbox:
    return RemoteSandbox(server_url, retries=1, backoff_s=0.05)


def post_raw(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{url}/run_code", data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


# --- client against the real server ----------------------------------------------------------------------------


def test_python_ok_with_stdin_and_files(remote: RemoteSandbox) -> None:
    code = "import sys\nprint(open('data/in.txt').read().strip(), sys.stdin.read().upper())"
    result = remote.run(
        RunRequest(argv=["python3", "main.py"], files={"main.py": code, "data/in.txt": "file"}, stdin="stdin")
    )
    assert result.status is RunStatus.OK, result
    assert result.stdout == b"file STDIN\n"
    assert result.exit_code == 0


def test_runtime_error_keeps_exit_code_and_stderr(remote: RemoteSandbox) -> None:
    result = remote.run(RunRequest(argv=["python3", "-c", "import sys; print('partial'); sys.exit(3)"]))
    assert result.status is RunStatus.RUNTIME_ERROR
    assert result.exit_code == 3
    assert result.stdout == b"partial\n"
    result = remote.run(RunRequest(argv=["python3", "-c", "raise ValueError('boom')"]))
    assert result.status is RunStatus.RUNTIME_ERROR
    assert b"ValueError: boom" in result.stderr


def test_timeout_is_timeout_not_error(remote: RemoteSandbox) -> None:
    started = time.monotonic()
    result = remote.run(RunRequest(argv=["python3", "-c", "while True: pass"], limits=Limits(wall_time_s=1.0)))
    assert result.status is RunStatus.TIMEOUT, result
    assert time.monotonic() - started < 10


def test_memory_limit_verdict_travels(remote: RemoteSandbox) -> None:
    result = remote.run(RunRequest(argv=["python3", "-c", "x = bytearray(900 << 20)"], limits=Limits(memory_mb=128)))
    assert result.status is RunStatus.MEMORY, result


def test_cpp_compile_and_run(remote: RemoteSandbox) -> None:
    result = remote.run(program_request(CPP_SUM, "cpp", stdin="40 2\n"))
    assert result.status is RunStatus.OK, result
    assert result.stdout == b"42\n"
    broken = remote.run(program_request("int main( {", "cpp"))
    assert broken.status is RunStatus.RUNTIME_ERROR
    assert broken.message == "compilation failed"
    assert b"error" in broken.stderr


def test_arbitrary_argv_and_binary_files_go_through_bash(remote: RemoteSandbox) -> None:
    request = RunRequest(
        argv=["sh", "-c", 'od -An -tx1 blob.bin; echo "$1"', "sh", "arg with space"],
        files={"blob.bin": bytes([0, 255, 10])},
    )
    assert fusion_request_for(request).language == "bash"
    result = remote.run(request)
    assert result.status is RunStatus.OK, result
    assert result.stdout.split() == [b"00", b"ff", b"0a", b"arg", b"with", b"space"]


def test_fetch_files_come_back_through_the_server(remote: RemoteSandbox) -> None:
    code = "open('out/answer.bin', 'wb').write(bytes([0, 255, 42]))\nopen('note.txt', 'w').write('hi')"
    request = RunRequest(
        argv=["python3", "main.py"],
        files={"main.py": code, "out/keep": ""},
        fetch_files=["out/answer.bin", "note.txt", "missing.txt"],
    )
    assert fusion_request_for(request).fetch_files == ["out/answer.bin", "note.txt", "missing.txt"]
    result = remote.run(request)
    assert result.status is RunStatus.OK, result
    assert result.files == {"out/answer.bin": bytes([0, 255, 42]), "note.txt": b"hi"}


def test_server_answers_fetch_files_in_base64(server_url: str) -> None:
    body = {"code": "open('r.txt', 'w').write('done')", "language": "python", "fetch_files": ["r.txt"]}
    code, payload = post_raw(server_url, body)
    assert code == 200 and payload["status"] == "Success", payload
    assert payload["files"] == {"r.txt": base64.b64encode(b"done").decode()}
    assert post_raw(server_url, {"code": "", "language": "python", "fetch_files": ["../etc/passwd"]})[0] == 422
    assert post_raw(server_url, {"code": "", "language": "python", "fetch_files": ["/etc/passwd"]})[0] == 422


def test_batch_keeps_order(remote: RemoteSandbox) -> None:
    requests = [RunRequest(argv=["python3", "-c", f"print({i} * {i})"]) for i in range(6)]
    results = remote.run_batch(requests, concurrency=3)
    assert [r.stdout for r in results] == [f"{i * i}\n".encode() for i in range(6)]


def test_cli_run_through_remote(server_url: str, tmp_path) -> None:
    source = tmp_path / "prog.py"
    source.write_text("import sys\nprint(sum(map(int, sys.stdin.read().split())))\n")
    stdin = tmp_path / "in.txt"
    stdin.write_text("1 2 3\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rewardsmith",
            "sandbox",
            "run",
            str(source),
            "--backend",
            "remote",
            "--url",
            server_url,
            "--stdin",
            str(stdin),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["status"] == "ok" and payload["stdout"] == "6\n"


# --- the server speaks SandboxFusion to any client ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status", "run_status", "return_code"),
    [
        ({"code": "print(1)", "language": "python"}, "Success", "Finished", 0),
        ({"code": "import sys; sys.exit(2)", "language": "python"}, "Failed", "Finished", 2),
        (
            {"code": "import time; time.sleep(9)", "language": "python", "run_timeout": 0.5},
            "Failed",
            "TimeLimitExceeded",
            None,
        ),
        ({"code": "echo $(cat x.txt)", "language": "bash", "files": {"x.txt": "aGk="}}, "Success", "Finished", 0),
    ],
)
def test_server_answers_sandboxfusion_shape(server_url: str, body, status, run_status, return_code) -> None:
    code, payload = post_raw(server_url, body)
    assert code == 200
    response = RunCodeResponse.model_validate(payload)
    assert response.status.value == status
    assert response.run_result is not None and response.run_result.status.value == run_status
    if return_code is not None:
        assert response.run_result.return_code == return_code
    if body["language"] == "bash":
        assert response.run_result.stdout == "hi\n"


def test_server_clamps_limits_to_its_policy(server_url: str) -> None:
    started = time.monotonic()
    code, payload = post_raw(
        server_url, {"code": "import time; time.sleep(60)", "language": "python", "run_timeout": 600}
    )
    assert code == 200 and payload["run_result"]["status"] == "TimeLimitExceeded"
    assert time.monotonic() - started < 15, "the server's --max-run-timeout 5 applies, not the request's 600"
    policy = ServerPolicy(max_run_timeout_s=5, max_memory_mb=256)
    limits = limits_for(RunCodeRequest(code="", language="python", run_timeout=1e6, memory_limit_MB=10**6), policy)
    assert (limits.wall_time_s, limits.cpu_time_s, limits.memory_mb) == (5, 5, 256)
    default = limits_for(RunCodeRequest(code="", language="python", memory_limit_MB=-1), policy)
    assert (default.memory_mb, default.wall_time_s) == (256, 5)  # the base 512 MB and 10 s are clamped too
    roomy = limits_for(RunCodeRequest(code="", language="python", run_timeout=2), ServerPolicy())
    assert (roomy.memory_mb, roomy.wall_time_s) == (ServerPolicy().base_limits.memory_mb, 2)


def test_server_rejects_bad_requests(server_url: str) -> None:
    assert post_raw(server_url, {"code": "x", "language": "cobol"})[0] == 422
    assert post_raw(server_url, {"language": "python"})[0] == 422
    assert post_raw(server_url, {"code": "", "language": "python", "files": {"../x": "aGk="}})[0] == 422
    assert post_raw(server_url, {"code": "", "language": "python", "files": {"a": "not base64!"}})[0] == 422


def test_server_cpp_compile_error_shape(server_url: str) -> None:
    code, payload = post_raw(server_url, {"code": "int main( {", "language": "cpp"})
    assert code == 200
    assert payload["status"] == "Failed"
    assert payload["run_result"] is None
    assert payload["compile_result"]["return_code"] != 0 and "error" in payload["compile_result"]["stderr"]


# --- faults ------------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_server_is_sandbox_error() -> None:
    sandbox = RemoteSandbox(f"http://127.0.0.1:{free_port()}", retries=2, backoff_s=0.01)
    result = sandbox.run(RunRequest(argv=["python3", "-c", "print(1)"]))
    assert result.status is RunStatus.SANDBOX_ERROR
    assert result.infrastructure_failure
    assert "after 3 attempts" in result.message


OK_BODY = {
    "status": "Success",
    "message": "",
    "compile_result": None,
    "files": {},
    "run_result": {"status": "Finished", "execution_time": 0.01, "return_code": 0, "stdout": "ok\n", "stderr": ""},
}


class StandIn:
    """A /run_code stand-in answering a script of (HTTP status, body) and counting requests in flight."""

    def __init__(self, script: list[tuple[int, bytes]], delay_s: float = 0.0) -> None:
        self.script = list(script)
        self.delay_s = delay_s
        self.calls = 0
        self.in_flight = 0
        self.peak = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                with owner.lock:
                    owner.calls += 1
                    owner.in_flight += 1
                    owner.peak = max(owner.peak, owner.in_flight)
                    status, body = owner.script.pop(0) if owner.script else (200, json.dumps(OK_BODY).encode())
                time.sleep(owner.delay_s)
                with owner.lock:
                    owner.in_flight -= 1
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stand_in():
    servers: list[StandIn] = []

    def make(script, delay_s: float = 0.0) -> StandIn:
        servers.append(StandIn(script, delay_s))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def test_5xx_is_retried_then_succeeds(stand_in) -> None:
    server = stand_in([(500, b"oops"), (503, b"busy")])
    result = RemoteSandbox(server.url, retries=3, backoff_s=0.01).run(RunRequest(argv=["python3", "-c", "print(1)"]))
    assert result.status is RunStatus.OK and result.stdout == b"ok\n"
    assert server.calls == 3


def test_5xx_forever_is_sandbox_error_after_bounded_retries(stand_in) -> None:
    server = stand_in([(500, b"oops")] * 10)
    result = RemoteSandbox(server.url, retries=2, backoff_s=0.01).run(RunRequest(argv=["python3", "-c", "print(1)"]))
    assert result.status is RunStatus.SANDBOX_ERROR and "HTTP 500" in result.message
    assert server.calls == 3


def test_4xx_and_malformed_bodies_are_sandbox_errors_without_retry(stand_in) -> None:
    server = stand_in([(422, b'{"detail": "bad language"}'), (200, b"not json"), (200, b'{"status": "Weird"}')])
    sandbox = RemoteSandbox(server.url, retries=3, backoff_s=0.01)
    results = [sandbox.run(RunRequest(argv=["python3", "-c", "1"])) for _ in range(3)]
    assert [r.status for r in results] == [RunStatus.SANDBOX_ERROR] * 3
    assert "bad language" in results[0].message
    assert server.calls == 3


def test_client_bounds_requests_in_flight(stand_in) -> None:
    server = stand_in([], delay_s=0.2)
    sandbox = RemoteSandbox(server.url, concurrency=2)
    results = sandbox.run_batch([RunRequest(argv=["python3", "-c", "1"])] * 8, concurrency=8)
    assert all(r.ok for r in results)
    assert server.peak == 2


def test_remote_sandbox_pickles_and_validates_config() -> None:
    sandbox = RemoteSandbox("http://127.0.0.1:9/", concurrency=3)
    clone = pickle.loads(pickle.dumps(sandbox))
    assert clone.config == sandbox.config and clone.config.base_url == "http://127.0.0.1:9"
    with pytest.raises(ValueError, match="http"):
        RemoteSandbox("127.0.0.1:8080")
    with pytest.raises(ValueError):
        RemoteSandbox("http://x", concurrency=0)


# --- protocol mapping, as a verdict table ------------------------------------------------------------------------


def run(status="Finished", rc=0, stdout="", stderr=""):
    return {"status": status, "execution_time": 0.1, "return_code": rc, "stdout": stdout, "stderr": stderr}


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ({"status": "Success", "run_result": run()}, RunStatus.OK),
        ({"status": "Failed", "run_result": run(rc=1)}, RunStatus.RUNTIME_ERROR),
        ({"status": "Failed", "run_result": run(rc=-9)}, RunStatus.RUNTIME_ERROR),
        ({"status": "Failed", "run_result": run("TimeLimitExceeded", rc=None)}, RunStatus.TIMEOUT),
        ({"status": "SandboxError", "message": "pod died", "run_result": None}, RunStatus.SANDBOX_ERROR),
        ({"status": "SandboxError", "run_result": run(rc=0)}, RunStatus.SANDBOX_ERROR),
        ({"status": "Failed", "run_result": run("Error", rc=None)}, RunStatus.SANDBOX_ERROR),
        ({"status": "Failed", "run_result": None}, RunStatus.SANDBOX_ERROR),
        ({"status": "Success", "run_result": run(rc=None)}, RunStatus.SANDBOX_ERROR),
        (
            {"status": "Failed", "compile_result": run(rc=1, stderr="error: x"), "run_result": None},
            RunStatus.RUNTIME_ERROR,
        ),
        ({"status": "Failed", "compile_result": run("TimeLimitExceeded", rc=None)}, RunStatus.TIMEOUT),
        ({"status": "Success", "compile_result": run(rc=0), "run_result": run(stdout="7\n")}, RunStatus.OK),
        # our server's exact verdict wins over the coarse SandboxFusion fields, but never turns an outage into one
        ({"status": "Failed", "run_result": run(rc=137), "rewardsmith_status": "memory"}, RunStatus.MEMORY),
        ({"status": "SandboxError", "run_result": None, "rewardsmith_status": "ok"}, RunStatus.SANDBOX_ERROR),
    ],
)
def test_response_mapping(response: dict, expected: RunStatus) -> None:
    result = run_result_from_response(RunCodeResponse.model_validate(response))
    assert result.status is expected
    if expected is RunStatus.RUNTIME_ERROR and response["run_result"] and response["run_result"]["return_code"] < 0:
        assert result.signal == 9


def test_response_files_are_decoded_and_bad_base64_is_a_sandbox_error() -> None:
    ok = {"status": "Success", "run_result": run(), "files": {"a/b.txt": base64.b64encode(b"xyz").decode()}}
    assert run_result_from_response(RunCodeResponse.model_validate(ok)).files == {"a/b.txt": b"xyz"}
    with pytest.raises(ValueError):
        run_result_from_response(RunCodeResponse.model_validate({**ok, "files": {"a": "not base64!"}}))


@pytest.mark.parametrize(
    ("request_", "language", "code"),
    [
        (RunRequest(argv=["python3", "main.py"], files={"main.py": "print(1)"}), "python", "print(1)"),
        (RunRequest(argv=["python", "-c", "print(2)"]), "python", "print(2)"),
        (RunRequest(argv=["node", "a.js"], files={"a.js": "console.log(3)"}), "nodejs", "console.log(3)"),
        (program_request("int main(){}", "cpp"), "cpp", "int main(){}"),
        (program_request("int main(){}", "cpp", compile_timeout_s=3), "cpp", "int main(){}"),
        (
            RunRequest(argv=["python3", "main.py", "--flag"], files={"main.py": "x"}),
            "bash",
            "exec python3 main.py --flag\n",
        ),
        (RunRequest(argv=["./run me"]), "bash", "exec './run me'\n"),
    ],
)
def test_request_mapping(request_: RunRequest, language: str, code: str) -> None:
    wire = fusion_request_for(request_)
    assert (wire.language, wire.code) == (language, code)
    assert wire.memory_limit_MB == request_.limits.memory_mb


def test_cpp_request_splits_compile_and_run_time() -> None:
    wire = fusion_request_for(program_request("int main(){}", "cpp", limits=Limits(wall_time_s=2), compile_timeout_s=3))
    assert (wire.compile_timeout, wire.run_timeout) == (3, 2)
    assert "main.cpp" not in wire.files
