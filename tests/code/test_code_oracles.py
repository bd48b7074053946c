"""No pass can be forged by reading the test, and no sample can unscore the batch.

Oracles (``tests/support/hostile_programs.py::ORACLES``): a frame-walking solution (caller frames' bytecode and
strings) and a memory-scanning one (``/proc/self/maps`` + ``ctypes``) answer ``add(a, b)`` with the value the
test compares it to, on a HumanEval ``check``, comprehension asserts and MBPP asserts with setup code. The control
runs the same oracles next to a test that *is* in their process (an untrusted test, ``untrusted_asserts="run"``):
they pass there, so a 0.0 under the trusted rounds is the design, not a
broken oracle. Output bombs (``OUTPUT_BOMBS``): forged records holding a 5000-digit integer, nesting 100,000 deep
and a 40,000-element set of colliding hashes, in every Python mode; each fails only its own sample, in bounded time,
while honest neighbours in the same batch score 1.0. Backends: local, docker when the engine answers, remote.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from rewardsmith import get_reward
from rewardsmith.rewards.code.values import MAX_SAME_HASH, PlainValueError, decode_plain, load_json
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.docker_engine import require_docker
from tests.support.hostile_programs import ORACLE_TESTS, ORACLES, OUTPUT_BOMBS
from tests.support.sandbox_server import sandbox_server

HONEST = "def add(a, b):\n    return a + b\n"
#: every Python mode the harness runs a solution in: calls, a simple assert (literal on the host, glue in the
#: trusted stage), and a program test answered over rounds
BOMB_TESTS = {
    "calls": {"language": "python", "fn_name": "add", "calls": [{"args": [1, 2], "expected": 3}]},
    "assert_literal": {"language": "python", "asserts": ["assert add(1, 2) == 3"]},
    "assert_glue": {"language": "python", "asserts": ["assert abs(add(1, 2) - 3) < 1e-9"]},
    "program": ORACLE_TESTS["humaneval_eq"],
}


def fenced(code: str) -> str:
    return f"```python\n{code}```"


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with sandbox_server(max_run_timeout=15) as url:
        yield url


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker), "remote"])
def backend_reward(request):
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec") and request.param != "docker":
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")
    if request.param == "local":
        instance = get_reward("code_tests", timeout_s=5.0, concurrency=4)
    elif request.param == "docker":
        require_docker()
        instance = get_reward("code_tests", backend="docker", backend_options={"concurrency": 4}, concurrency=4)
    else:
        url = request.getfixturevalue("server_url")
        instance = get_reward("code_tests", backend="remote", base_url=url, concurrency=4)
    yield instance
    instance.close()


def test_oracles_score_zero_while_the_honest_solution_scores_one(backend_reward):
    formats = sorted(ORACLE_TESTS)
    completions = [fenced(h.code) for h in ORACLES] + [fenced(HONEST)] * len(formats)
    tests = [ORACLE_TESTS[h.test_format] for h in ORACLES] + [ORACLE_TESTS[f] for f in formats]
    results = backend_reward.details(completions, tests=tests)
    oracles, honest = results[: len(ORACLES)], results[len(ORACLES) :]
    assert [r.score for r in honest] == [1.0] * len(formats), [r.reason for r in honest]
    leaks = {h.id: r.reason for h, r in zip(ORACLES, oracles, strict=True) if r.score != 0.0}
    assert not leaks, leaks


def _in_process(tests: dict) -> dict:
    """The same test made untrusted (an ``eval``), so ``untrusted_asserts="run"`` runs it next to the solution."""
    if "test" in tests:
        return {**tests, "test": tests["test"] + "    assert eval('1') == 1\n"}
    if "test_list" in tests:
        return {**tests, "test_setup_code": "_ = eval('1')\n" + tests["test_setup_code"]}
    return {**tests, "asserts": [f"_ = eval('1')\n{a}" for a in tests["asserts"]]}


def test_control_the_oracles_pass_when_the_test_is_in_their_process():
    runner = get_reward("code_tests", untrusted_asserts="run", concurrency=4)
    try:
        results = runner.details(
            [fenced(h.code) for h in ORACLES], tests=[_in_process(ORACLE_TESTS[h.test_format]) for h in ORACLES]
        )
    finally:
        runner.close()
    assert {h.id: r.score for h, r in zip(ORACLES, results, strict=True)} == {h.id: 1.0 for h in ORACLES}, [
        r.reason for r in results
    ]
    assert all(r.trusted is False for r in results)


def test_output_bombs_fail_only_their_own_sample_in_bounded_time(backend_reward):
    """Bombs and honest solutions interleaved in one batch, every mode: bombs 0.0 with a reason, honest 1.0."""
    cases = [(bomb, mode) for bomb in OUTPUT_BOMBS for mode in BOMB_TESTS]
    completions, tests = [], []
    for bomb, mode in cases:
        completions += [fenced(bomb.code), fenced(HONEST)]
        tests += [BOMB_TESTS[mode], BOMB_TESTS[mode]]
    started = time.monotonic()
    results = backend_reward.details(completions, tests=tests)
    elapsed = time.monotonic() - started
    bombs = {f"{b.id}@{m}": (r.score, r.reason) for (b, m), r in zip(cases, results[0::2], strict=True)}
    assert {k: s for k, (s, _) in bombs.items()} == dict.fromkeys(bombs, 0.0), bombs
    assert [r.score for r in results[1::2]] == [1.0] * len(cases), [r.reason for r in results[1::2]]
    assert elapsed < 120, f"{elapsed:.0f} s"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("9" * 5000, "digits"),
        ("[" * 100_000 + "]" * 100_000, "deeply"),
        ('{"value": ' + "[" * 5000 + "]" * 5000 + "}", "deeply"),
        ('{"a": 1', "malformed"),
        (b'{"a": "\xff"}', "malformed"),
    ],
)
def test_reported_json_is_refused_per_sample_not_raised(text, why):
    with pytest.raises(PlainValueError, match=why):
        decode_plain(load_json(text))


def test_colliding_hashes_are_refused_in_linear_time():
    modulus = 2**61 - 1
    started = time.perf_counter()
    for tag in ("$set", "$dict"):
        items = [k * modulus for k in range(1, 40_001)]
        body = items if tag == "$set" else [[k, 0] for k in items]
        with pytest.raises(PlainValueError, match="one hash"):
            decode_plain({tag: body})
    assert time.perf_counter() - started < 2.0
    few = [k * modulus for k in range(1, MAX_SAME_HASH + 1)]
    assert decode_plain({"$set": few}) == set(few)
    assert decode_plain({"$set": list(range(100_000))}) == set(range(100_000))


def test_values_that_make_the_trusted_stage_time_out_fail_that_sample_only():
    """The trusted stage is shared by samples; one whose values make it run out of time is retried alone and
    scores 0.0 (its own doing), never ``None``, and its neighbours in the shared run still score."""
    slow = "def add(a, b):\n    return 10 ** 12\n"
    tests = [
        {"asserts": ["assert sum(range(add(1, 2))) == 3"]},
        {"test": "def check(candidate):\n    assert sum(range(candidate(1, 2))) == 3\n", "entry_point": "add"},
    ]
    reward = get_reward("code_tests", timeout_s=2.0, concurrency=2)
    try:
        results = reward.details([fenced(slow), fenced(HONEST)] * 2, tests=[tests[0], tests[0], tests[1], tests[1]])
    finally:
        reward.close()
    assert [r.score for r in results] == [0.0, 1.0, 0.0, 1.0], [r.reason for r in results]
    assert all("trusted check stage failed on this sample's values" in r.reason for r in results[0::2])
