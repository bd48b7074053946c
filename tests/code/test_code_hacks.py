"""Reward hacking: every trick scores exactly 0.0 (not None) on every sandbox backend.

Tricks: ``tests/support/hostile_programs.py::REWARD_HACKS``, the assert tricks aimed at the program formats
(comprehension asserts, a HumanEval ``check``: decided in the trusted process over rounds), and
:data:`REPLAY_HACKS` aimed at the rounds themselves (patched builtins, forged answer records).
The control rows show the same tests give the honest solution 1.0, so a zero is the verdict, not a broken setup.
Backends: local always; docker when the engine and image are available; remote through a real
``rewardsmith sandbox serve`` on 127.0.0.1 (local backend behind it).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardsmith import get_reward
from rewardsmith.rewards.code.records import several_records
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.docker_engine import require_docker
from tests.support.hostile_programs import HACK_PROBLEM, REWARD_HACKS, RewardHack
from tests.support.sandbox_server import sandbox_server

ADD = "def add(a, b):\n    return a + b\n"
TESTS = {
    "calls": {"language": "python", "fn_name": HACK_PROBLEM["fn_name"], "calls": HACK_PROBLEM["calls"]},
    "asserts": {"language": "python", "asserts": HACK_PROBLEM["asserts"]},
    "stdio": {"language": "python", "stdio": HACK_PROBLEM["stdio"]},
    # program formats: the test runs only in the trusted process; the solution's process answers its calls
    "comprehension": {
        "language": "python",
        "asserts": [
            "assert all(add(a, b) == a + b for a, b in [(1, 2), (10, 5), (-4, 5)])",
            "assert all(map(lambda p: add(*p) == sum(p), [(1, 2), (3, 4)]))",
            "assert [abs(add(x, 0.25) - x - 0.25) < 1e-9 for x in (0.5, 1.5)] == [True, True]",
        ],
    },
    "humaneval": {
        "language": "python",
        "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    for i in range(3):\n"
        "        assert candidate(i, 10) == i + 10\n    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-9\n",
        "entry_point": "add",
    },
}
HONEST = {
    "calls": ADD,
    "asserts": ADD,
    "stdio": "a, b = map(int, input().split())\nprint(a + b)\nprint(a + b + 1)\n",
    "comprehension": ADD,
    "humaneval": ADD,
}

REPLAY_HACKS: tuple[RewardHack, ...] = (
    RewardHack(
        "patched_all_builtin",
        "comprehension",
        "import builtins\nbuiltins.all = lambda items: True\ndef add(a, b):\n    return 0\n",
        "makes all() true in its own process: the verdict is replayed in one that never loaded it",
    ),
    RewardHack(
        "patched_range_builtin",
        "humaneval",
        "import builtins\nbuiltins.range = lambda *a: []\ndef add(a, b):\n    return 3\n",
        "patches range in its own process: the check's loop runs in the trusted process, untouched",
    ),
    RewardHack(
        "stop_iteration_ends_map",
        "comprehension",
        "def add(a, b):\n    raise StopIteration\n",
        "StopIteration inside map() would end it early (all([]) is True) if replayed",
    ),
    RewardHack(
        "own_check_function",
        "humaneval",
        "def check(candidate):\n    pass\ndef add(a, b):\n    return 0\n",
        "defines check() itself; the test's check is the one that runs",
    ),
    RewardHack(
        "exit_inside_check",
        "humaneval",
        "def add(a, b):\n    raise SystemExit(0)\n",
    ),
    RewardHack(
        "forge_empty_table_and_pass",
        "humaneval",
        "import json, os, sys\n"
        "spec = sys._getframe(1).f_locals['spec']\n"
        "record = {'table': {}, 'passed': True}\n"
        "os.write(1, ('\\n' + spec['nonce'] + json.dumps(record) + '\\n').encode())\n"
        "os._exit(0)\n",
        "finds the nonce in the harness frame and reports an empty table and a pass: answers must cover every call",
    ),
    RewardHack(
        "forge_table_claims_objects",
        "comprehension",
        "import json, os, sys\n"
        "spec = sys._getframe(1).f_locals['spec']\n"
        "table = {str(k) + '|' + json.dumps({'$tuple': []}): {'object': True} for k in range(10)}\n"
        "os.write(1, ('\\n' + spec['nonce'] + json.dumps({'table': table}) + '\\n').encode())\n"
        "os._exit(0)\n",
        "a forged record may only choose the solution's outputs, never the verdict",
    ),
)


def _derived_hacks() -> tuple[RewardHack, ...]:
    """The assert tricks, aimed at the record/replay formats too."""
    return tuple(
        RewardHack(f"{hack.id}@{test_format}", test_format, hack.code, hack.note)
        for hack in REWARD_HACKS
        if hack.test_format == "asserts"
        for test_format in ("comprehension", "humaneval")
    )


ALL_HACKS = REWARD_HACKS + _derived_hacks() + REPLAY_HACKS


def fenced(code: str) -> str:
    return f"```python\n{code}```"


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """``rewardsmith sandbox serve`` on a free 127.0.0.1 port (local backend)."""
    with sandbox_server(max_run_timeout=15) as url:
        yield url


def _local_reward():
    if LocalSandbox().tier != "bwrap":
        pytest.skip("bwrap tier unavailable here")
    return get_reward("code_tests", timeout_s=5.0, concurrency=4)


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker), "remote"])
def backend_reward(request):
    """The same reward on each backend."""
    if request.param == "local":
        instance = _local_reward()
    elif request.param == "docker":
        require_docker()
        instance = get_reward("code_tests", backend="docker", backend_options={"concurrency": 4}, concurrency=4)
    else:
        url = request.getfixturevalue("server_url")
        instance = get_reward("code_tests", backend="remote", base_url=url, concurrency=4)
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def local_reward():
    instance = _local_reward()
    yield instance
    instance.close()


def test_control_honest_solutions_score_one(backend_reward):
    formats = sorted(HONEST)
    results = backend_reward.details([fenced(HONEST[f]) for f in formats], tests=[TESTS[f] for f in formats])
    assert {f: r.score for f, r in zip(formats, results, strict=True)} == dict.fromkeys(formats, 1.0), [
        r.reason for r in results
    ]


def test_all_hacks_score_zero_in_one_batch(backend_reward):
    """Scored as one batch, as a trainer would: each hack gets exactly 0.0 with a reason, on every backend."""
    assert_all_hacks_score_zero(backend_reward)


def test_all_hacks_score_zero_with_one_bwrap_per_run():
    per_run = get_reward("code_tests", backend_options={"tier": "bwrap-exec"}, concurrency=4)
    try:
        assert per_run([fenced(HONEST["calls"])], tests=[TESTS["calls"]]) == [1.0]
        assert_all_hacks_score_zero(per_run)
    finally:
        per_run.close()


def assert_all_hacks_score_zero(reward):
    results = reward.details([fenced(h.code) for h in ALL_HACKS], tests=[TESTS[h.test_format] for h in ALL_HACKS])
    scored = {hack.id: (result.score, result.reason) for hack, result in zip(ALL_HACKS, results, strict=True)}
    leaks = {k: v for k, v in scored.items() if v[0] != 0.0}
    assert not leaks, leaks


@pytest.mark.parametrize("hack", ALL_HACKS, ids=[h.id for h in ALL_HACKS])
def test_hack_scores_zero_alone(local_reward, hack: RewardHack):
    (result,) = local_reward.details([fenced(hack.code)], tests=[TESTS[hack.test_format]])
    assert result.score == 0.0, (hack.note, result.reason)


def test_replayed_verdict_would_have_been_forged_in_process():
    """Why replay matters: the same trick passes when the test runs next to the solution (untrusted mode)."""
    hack = next(h for h in REPLAY_HACKS if h.id == "patched_all_builtin")
    runner = get_reward("code_tests", untrusted_asserts="run")
    try:
        (result,) = runner.details([fenced(hack.code)], tests=[{"asserts": ["assert eval('all([add(1, 2) == 3])')"]}])
    finally:
        runner.close()
    assert result.score == 1.0 and result.trusted is False


FORK_LOOP = "import os\n\ndef add(a, b):\n    while True:\n        os.fork()\n"


def test_a_fork_bomb_is_reported_as_resource_exhaustion(local_reward):
    """Every forked copy of the harness reports its fork error: the reason names the process limit, not forgery."""
    (result,) = local_reward.details([fenced(FORK_LOOP)], tests=[TESTS["calls"]])
    assert result.score == 0.0
    assert "resource exhaustion" in result.reason and "process limit" in result.reason, result.reason
    assert "forged" not in result.reason


@pytest.mark.parametrize(
    ("errors", "words"),
    [
        (["BlockingIOError: [Errno 11] Resource temporarily unavailable"] * 3, "forked until the process limit"),
        (["", ""], "forked or wrote records of its own"),
    ],
)
def test_several_records_say_why(errors, words):
    assert words in several_records([{"error": e} if e else {"ok": True} for e in errors])
