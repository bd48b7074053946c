"""Fail closed: without bubblewrap, ``code_tests`` refuses to run model code unless weak isolation is asked for.

bwrap is made unavailable for real (``PATH`` without it, so the sandbox's own lookup finds nothing); the
completions are host attacks (read a host secret, write a host file, reach a host listener) and a correct
program. Strong (the default): every sample is unscorable with a reason that says how to fix it, and the host is
untouched. ``isolation: weak``: the programs run and every reason announces the weak tier.
"""

from __future__ import annotations

import socket
import threading

import pytest

from rewardsmith import get_reward

SUM = {"stdio": [{"input": "1 2\n", "output": "3\n"}]}


def block(code: str) -> str:
    return f"```python\n{code}\n```"


@pytest.fixture
def host(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("HOST-SECRET-7f3a")
    secret.chmod(0o644)
    tmp_path.chmod(0o755)
    target = tmp_path / "written-by-model"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    accepted: list[bool] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            accepted.append(True)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield {"secret": secret, "target": target, "port": listener.getsockname()[1], "accepted": accepted}
    stop.set()
    thread.join(2)
    listener.close()


def attacks(host: dict) -> list[str]:
    read = f"print(open({str(host['secret'])!r}).read())"
    write = f"open({str(host['target'])!r}, 'w').write('x')\nprint(3)"
    net = f"import socket\nsocket.create_connection(('127.0.0.1', {host['port']}), timeout=2)\nprint(3)"
    honest = "a, b = map(int, input().split())\nprint(a + b)"
    return [block(read), block(write), block(net), block(honest)]


@pytest.fixture
def no_bwrap(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("PATH", str(tmp_path_factory.mktemp("empty-path")))


def test_without_bwrap_every_sample_is_unscorable_and_the_host_untouched(no_bwrap, host):
    reward = get_reward("code_tests")
    try:
        results = reward.score_batch(attacks(host), [{"tests": SUM}] * 4)
    finally:
        reward.close()
    assert [r.score for r in results] == [None] * 4
    for result in results:
        assert "apt-get install bubblewrap" in result.reason
        assert "docker" in result.reason and "isolation='weak'" in result.reason
        assert "HOST-SECRET" not in result.reason
    assert not host["target"].exists()
    assert host["accepted"] == []


def test_weak_isolation_runs_only_when_asked_and_says_so_in_every_reason(no_bwrap, host):
    reward = get_reward("code_tests", isolation="weak")
    try:
        results = reward.score_batch(attacks(host), [{"tests": SUM}] * 4)
    finally:
        reward.close()
    assert results[3].score == 1.0, results[3].reason
    assert all("WEAK ISOLATION" in r.reason for r in results)


def test_strong_isolation_is_the_default_and_weak_is_never_chosen_silently():
    assert get_reward("code_tests").config.isolation == "strong"
    from rewardsmith.sandboxes.local.backend import LocalSandbox

    with pytest.raises(ValueError, match="isolation='weak'"):
        LocalSandbox(tier="subprocess")
