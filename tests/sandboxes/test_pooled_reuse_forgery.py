"""A wrong solution cannot forge the pass of a later sample that reuses its sandbox, on any backend.

The attack: a wrong solution plants a forger where a Python process looks for modules (``json.py`` in the work
directory, a ``.pth`` file in the user site under ``$HOME``), jams its work area so that the cleanup's deletes fail
(the area made read-only, a tree deeper than the cleanup descends), and leaves the files the next run's bootstrap
must write in place. When the next trusted check of that container imports the forger, it prints a pass for every
check. Each row runs four samples through ``code_tests`` one after the other with ``concurrency=1``, so the same
pooled container (or warm forkserver, or served backend) serves them all: the attacker, an honest RIGHT solution
(which must still get 1.0: a neighbour never pays for the attack), an honest WRONG one (0.0: nothing forged), and
the right one again.

Backends: the Docker pool (one container); the local forkserver; a ``rewardsmith sandbox serve`` with a one-container
Docker backend behind it, the attacker and the honest samples sent by two different clients (tenants). The last
tests hold the trusted stage itself to never import from its work directory, and a container dirtied past what its
cleanup can undo to be replaced before the next run, not handed to it.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator

import pytest

from rewardsmith import get_reward
from rewardsmith.rewards.code import harness
from rewardsmith.sandboxes.base import Limits, RunRequest, RunStatus
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.docker_engine import require_docker

HUMANEVAL = {
    "language": "python",
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    for i in range(3):\n"
    "        assert candidate(i, 10) == i + 10\n",
    "entry_point": "add",
}
RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"

#: what the forger does when a process imports it: in a trusted check (its spec in the work directory, as the
#: trusted stage used to read it) it prints a pass for every check and exits; anywhere else it stays quiet
FORGER = r"""
import os, sys
def _rk_forge():
    try:
        with open("rk_spec.json") as handle:
            text = handle.read()
    except OSError:
        return
    if '"mode": "check"' not in text:
        return
    nonce = text.split('"nonce": "', 1)[1].split('"', 1)[0]
    count = text.count('"replay": ') + text.count('"source": ')
    os.write(1, ("\n" + nonce + '{"results": [' + ", ".join(['{"passed": true}'] * count) + "]}\n").encode())
    os._exit(0)
_rk_forge()
"""
#: as ``json.py``: forge, or else become the real ``json`` so every other run goes on working
JSON_FORGER = (
    FORGER
    + r"""
sys.path[:] = [p for p in sys.path if p and p != os.getcwd()]
del sys.modules["json"]
import json as _rk_json
sys.modules["json"] = _rk_json
"""
)

PLANT = f"""
import os, sys
_here = os.getcwd()
with open(os.path.join(_here, "json.py"), "w") as _f:
    _f.write({JSON_FORGER!r})
_site = os.path.expanduser("~/.local/lib/python%d.%d/site-packages" % sys.version_info[:2])
try:
    os.makedirs(_site, exist_ok=True)
    with open(os.path.expanduser("~/.rk_forge.py"), "w") as _f:
        _f.write({FORGER!r})
    with open(os.path.join(_site, "zz_forge.pth"), "w") as _f:
        _f.write("import os; exec(open(os.path.expanduser('~/.rk_forge.py')).read())\\n")
except OSError:
    pass
for _name in ("rk_spec.json", "main.py", "rk_harness.py", "solution.py"):
    open(os.path.join(_here, _name), "a").close()  # the next bootstrap rewrites them in place
"""
DEEP_TREE = """
_path = os.path.join(_here, "deep")
os.makedirs(os.path.join(_path, *["d"] * 90), exist_ok=True)
"""
READ_ONLY = "\nos.chmod(_here, 0o500)\n"

#: (id, how the attacker jams its area): each ends with a wrong ``add``
JAMS = [
    ("read-only-area", PLANT + READ_ONLY),
    ("read-only-area-deep-tree", PLANT + DEEP_TREE + READ_ONLY),
    ("unsearchable-area", PLANT + DEEP_TREE + "\nos.chmod(_here, 0o100)\n"),
]
#: the samples in order and the score each must get
SEQUENCE = [("attacker", None, 0.0), ("right", RIGHT, 1.0), ("wrong", WRONG, 0.0), ("right again", RIGHT, 1.0)]


def fenced(code: str) -> str:
    return f"```python\n{code}```"


def scores_in_turn(attacker_reward, honest_reward, jam: str) -> dict[str, tuple[float | None, str]]:
    """Score the sequence one sample at a time (the same sandbox serves each in turn)."""
    scored = {}
    for name, code, _ in SEQUENCE:
        reward = attacker_reward if code is None else honest_reward
        (result,) = reward.details([fenced(code if code is not None else jam + WRONG)], tests=[HUMANEVAL])
        scored[name] = (result.score, result.reason)
    return scored


def expected() -> dict[str, float]:
    return {name: score for name, _, score in SEQUENCE}


def assert_sequence(scored: dict[str, tuple[float | None, str]]) -> None:
    assert {name: score for name, (score, _) in scored.items()} == expected(), scored


# -- docker: one pooled container ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def docker_reward() -> Iterator:
    require_docker()
    reward = get_reward("code_tests", backend="docker", backend_options={"concurrency": 1}, concurrency=1)
    yield reward
    reward.close()


@pytest.mark.docker
@pytest.mark.parametrize("jam", [j[1] for j in JAMS], ids=[j[0] for j in JAMS])
def test_docker_pooled_container_cannot_forge_the_next_sample(docker_reward, jam):
    assert_sequence(scores_in_turn(docker_reward, docker_reward, jam))


# -- local: the warm forkserver (a fresh area per run by construction; the same property, held) ---------------------
def test_local_forkserver_cannot_forge_the_next_sample():
    if LocalSandbox().tier != "bwrap":
        pytest.skip("bwrap tier unavailable here")
    reward = get_reward("code_tests", backend_options={"concurrency": 1}, concurrency=1)
    try:
        assert_sequence(scores_in_turn(reward, reward, JAMS[1][1]))
    finally:
        reward.close()


# -- remote: two tenants of one served Docker container -------------------------------------------------------------
@pytest.mark.docker
def test_served_docker_container_cannot_forge_another_tenants_sample():
    require_docker()
    from rewardsmith.sandboxes.docker.backend import DockerSandbox
    from rewardsmith.sandboxes.fusion.server import SandboxServer

    backend = DockerSandbox(concurrency=1)
    server = SandboxServer(("127.0.0.1", 0), backend, concurrency=1)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    tenants = [get_reward("code_tests", backend="remote", base_url=url, concurrency=1) for _ in range(2)]
    try:
        assert_sequence(scores_in_turn(tenants[0], tenants[1], JAMS[1][1]))
    finally:
        for tenant in tenants:
            tenant.close()
        server.shutdown()
        server.server_close()
        backend.close()


# -- the trusted stage reads nothing from its work directory ----------------------------------------------------------
#: a check that fails (1 != 2), and where a forger may sit in the trusted process's work directory
PLANTED = [
    ("json-module", {"json.py": JSON_FORGER}),
    ("module-the-check-imports", {"math.py": FORGER}),
    ("sitecustomize", {"sitecustomize.py": FORGER, "usercustomize.py": FORGER}),
]


@pytest.mark.parametrize("files", [p[1] for p in PLANTED], ids=[p[0] for p in PLANTED])
def test_trusted_stage_never_imports_from_its_work_directory(files):
    box = LocalSandbox(concurrency=1)
    if box.tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here")
    plan = harness.plan_assert(_assert_test("assert math.floor(add(1, 1)) == sum([1, 1])"))
    nonce = harness.new_nonce()
    request = harness.python_check_request([(plan, [1])], nonce, Limits(wall_time_s=10, cpu_time_s=10))
    spec_like = json.dumps({"nonce": nonce, "mode": "check", "checks": [{"source": ""}]})
    planted = request.model_copy(update={"files": {**request.files, **files, "rk_spec.json": spec_like}})
    try:
        result = box.run(planted)
    finally:
        box.close()
    assert result.status is RunStatus.OK, (result.message, result.stderr[-400:])
    record, why = harness.single_record(result, nonce)
    assert record == {"results": [{"passed": False}]}, (why, result.stdout[-400:])


def _assert_test(source: str):
    from rewardsmith.rewards.code.case_formats import AssertTest

    return AssertTest(source=source)


# -- a container dirtied past its cleanup is replaced, transparently -------------------------------------------------
@pytest.mark.docker
def test_docker_container_its_cleanup_cannot_empty_is_replaced_not_reused():
    """A root-owned ``json`` package in the work area (no run can make one: it stands for any trick the cleanup
    cannot undo): the next run must not start in that container, and must still run (not ``None``): a fresh
    container runs it."""
    require_docker()
    from rewardsmith.sandboxes.docker.backend import DockerSandbox

    box = DockerSandbox(concurrency=1)
    try:
        box.warm_up()
        container = box._idle.queue[0]
        planted = "mkdir /sandbox/json && echo 'raise SystemExit(\"FORGED\")' > /sandbox/json/__init__.py"
        # Host root in the container's mount namespace: full capabilities, which no exec into the container gets.
        container.handle.reload()
        pid = str(container.handle.attrs["State"]["Pid"])
        made = subprocess.run(["nsenter", "-t", pid, "-m", "sh", "-c", planted], capture_output=True, timeout=60)
        assert made.returncode == 0, made.stderr
        program = "import json\nprint(json.dumps([6 * 7]))\n"
        result = box.run(RunRequest(argv=["python3", "main.py"], files={"main.py": program}))
        assert (result.status, result.stdout) == (RunStatus.OK, b"[42]\n"), (result.message, result.stderr[-300:])
        assert box._idle.queue[0] is not container
    finally:
        box.close()
