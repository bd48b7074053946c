"""The reward server's parts without HTTP: specs, the request contract, OpenRLHF's mapping, admission, deadline.

The HTTP behaviour of the same parts is in test_serve_http.py; these tables pin the rules themselves.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.support.extras import require_extras

require_extras("serve")

from rewardsmith import ConfigError, Reward, RewardResult, get_reward
from rewardsmith.adapters.runtime.serve.admission import Admission, QueueFull
from rewardsmith.adapters.runtime.serve.metrics import ServeMetrics, reason_kind
from rewardsmith.adapters.runtime.serve.scoring import (
    BadRequest,
    openrlhf_batch,
    openrlhf_payload,
    prepare,
    response_from_query,
    score,
)
from rewardsmith.adapters.runtime.serve.settings import ServeSettings
from rewardsmith.adapters.runtime.serve.specs import build_served
from tests.support.timing import slack

GOOD = "<think>2+2=4</think> 4"


# -- specs ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "document, names",
    [
        ({"name": "think_format"}, ["think_format"]),
        ("think_format", ["think_format"]),
        (["think_format", {"name": "tag_count"}], ["think_format", "tag_count"]),
        ({"rewards": ["think_format", {"name": "think_format", "label": "fmt2"}]}, ["think_format", "fmt2"]),
        # A training spec file serves as it is: weights and `async` are the trainer's business.
        ({"rewards": [{"name": "tag_count", "weight": 0.5}], "async": True}, ["tag_count"]),
        (
            {"name": "weighted_sum", "config": {"name": "fmt_and_tags", "rewards": ["think_format", "tag_count"]}},
            ["fmt_and_tags"],
        ),
        ({"name": "math_equivalence", "gate": "think_format"}, ["math_equivalence_if_think_format"]),
    ],
)
def test_spec_documents_serve_each_reward_under_its_logged_name(document: Any, names: list[str]) -> None:
    assert list(build_served(document)) == names


def test_label_column_defaults_to_the_one_required_column_and_can_be_set() -> None:
    served = build_served(
        [
            "think_format",
            {"name": "math_equivalence", "config": {"gold_column": "answer"}},
            "code_tests",
            {"name": "tag_count", "label_column": "gold", "whole_batch": True},
        ]
    )
    assert served["think_format"].label_column == "label"
    assert served["math_equivalence"].label_column == "answer"
    assert served["code_tests"].label_column == "tests"
    assert served["tag_count"].label_column == "gold"
    assert served["tag_count"].whole_batch and not served["think_format"].whole_batch
    described = served["math_equivalence"].describe("math_equivalence")
    assert described["config"]["gold_column"] == "answer" and described["reward"] == "math_equivalence"


@pytest.mark.parametrize(
    "document, message",
    [
        (["think_format", "think_format"], "served twice"),
        ({"name": "no_such_reward"}, "unknown reward"),
        ({"name": "think_format", "colour": "red"}, "unknown keys"),
        ({"rewards": ["think_format"], "port": 80}, "expected 'name' or 'rewards'"),
        ([], "no rewards"),
        ({"name": "regex_match", "config": {"pattern": "("}}, "regex_match"),
        ({"name": "think_format", "whole_batch": "yes"}, "whole_batch"),
        ([42], "a reward spec is a name"),
    ],
)
def test_bad_spec_fails_at_start_with_the_reason(document: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_served(document)


def test_token_env_must_be_set_when_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RK_UNIT_TOKEN", raising=False)
    with pytest.raises(ValueError, match="RK_UNIT_TOKEN"):
        ServeSettings(token_env="RK_UNIT_TOKEN").token()
    monkeypatch.setenv("RK_UNIT_TOKEN", "s3cret")
    assert ServeSettings(token_env="RK_UNIT_TOKEN").token() == "s3cret"
    assert ServeSettings().token() is None


# -- the request contract --------------------------------------------------------------------------------------
def test_prepare_reads_plain_and_chat_completions_and_names_non_text() -> None:
    chat = [{"role": "assistant", "content": GOOD}]
    texts, rows, early = prepare([GOOD, chat, 5, None], {"solution": ["a", "b", "c", "d"], "prompts": list("pqrs")})
    assert texts == [GOOD, GOOD, None, None]
    assert [r["solution"] for r in rows] == ["a", "b", "c", "d"] and rows[1]["prompt"] == "q"
    assert early[:2] == [None, None]
    assert early[2].reason == "completion is int, not text" and early[3].reason == "completion is None, not text"


def test_misaligned_columns_are_refused_with_the_in_process_reason() -> None:
    local = get_reward("math_equivalence").details(["a", "b"], solution=["1"])[0].reason
    with pytest.raises(BadRequest, match="column 'solution' has 1 value for 2 completions") as caught:
        prepare(["a", "b"], {"solution": ["1"]})
    assert str(caught.value) in local
    with pytest.raises(BadRequest, match="for 0 completions"):
        prepare([], {"solution": ["1"]})
    assert prepare([], {}) == ([], [], [])


class Sleepy(Reward):
    """Sleeps as many tenths of a second as the completion says (not registered: in-process only)."""

    name = "sleepy"

    def score_one(self, completion: str, row: Any) -> RewardResult:
        time.sleep(int(completion) / 10)
        return RewardResult(score=1.0, reason=f"slept {completion}")


def test_deadline_leaves_overrunning_samples_unscorable_never_zero() -> None:

    async def timed() -> tuple[Any, Any, float]:
        start = time.monotonic()
        results, timings = await score(Sleepy(), ["0", "30", "1"], deadline_s=1.0)
        return results, timings, time.monotonic() - start

    results, timings, elapsed = asyncio.run(timed())  # the loop's exit still waits for the sleeping thread
    assert [r.score for r in results] == [1.0, None, 1.0]
    assert results[1].reason == "deadline: not scored within 1 s"
    assert elapsed < 2.5, elapsed
    assert timings[0] < 0.5 and timings[1] == 1.0


def test_whole_request_in_one_call_when_chunk_covers_it() -> None:
    calls: list[int] = []

    class Counting(Reward):
        name = "counting"

        def score_batch(self, completions, rows):
            calls.append(len(completions))
            return [RewardResult(score=1.0) for _ in completions]

    asyncio.run(score(Counting(), ["a"] * 5, chunk_size=5))
    asyncio.run(score(Counting(), ["a"] * 5, chunk_size=2))
    assert calls[0] == 5 and sorted(calls[1:]) == [1, 2, 2]


# -- OpenRLHF ----------------------------------------------------------------------------------------------
PROMPT = "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"


@pytest.mark.parametrize(
    "query, prompt, response, note",
    [
        (PROMPT + GOOD + "<|im_end|>", PROMPT, GOOD, None),
        ("<s>" + PROMPT + GOOD + "</s>", PROMPT, GOOD, None),  # a BOS marker the decode put first
        (PROMPT + GOOD + "<|im_end|>\n<|endoftext|>", PROMPT, GOOD, None),
        (PROMPT + GOOD + "  ", PROMPT, GOOD + "  ", None),  # only end markers are removed, not text
        ("Q: 2+2? " + GOOD, "another prompt", "Q: 2+2? " + GOOD, "prompt not found in query; scored the whole query"),
        (GOOD, None, GOOD, None),
    ],
)
def test_response_is_the_query_after_its_prompt(query: str, prompt: Any, response: str, note: Any) -> None:
    assert response_from_query(query, prompt, ServeSettings().eos_markers) == (response, note)


def test_stripping_end_markers_is_linear_in_the_query() -> None:
    """It runs on the event loop: a query ending in thousands of markers must not stall the server."""
    markers = ServeSettings().eos_markers

    def best(n: int, repeats: int) -> float:
        query = PROMPT + GOOD + "</s>\n<|im_end|> " * n
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            assert response_from_query(query, PROMPT, markers) == (GOOD, None)
            times.append(time.perf_counter() - started)
        return min(times)

    baseline = best(60, 30)  # about 1 KB
    for n in (3_600, 36_000):  # about 60 KB and 600 KB
        assert best(n, 3) <= 10 * baseline * n / 60 + slack(0.1), n


def test_openrlhf_labels_fill_the_label_column_or_become_columns() -> None:
    completions, columns, notes = openrlhf_batch(
        [PROMPT + "x", PROMPT + "y"], [PROMPT, PROMPT], ["1", "2"], "solution", ("<|im_end|>",)
    )
    assert completions == ["x", "y"] and columns == {"prompt": [PROMPT, PROMPT], "solution": ["1", "2"]}
    assert notes == [None, None]
    _, columns, _ = openrlhf_batch(["a", "b"], None, [{"solution": "1", "task": "m"}, {"solution": "2"}], "label", ())
    assert columns == {"solution": ["1", "2"], "task": ["m", None]}
    with pytest.raises(BadRequest, match="labels has 1 values for 2 queries"):
        openrlhf_batch(["a", "b"], None, ["1"], "label", ())
    assert openrlhf_batch([], [], [], "label", ()) == ([], {"prompt": [], "label": []}, [])


def test_openrlhf_payload_is_numeric_and_flags_unscorable() -> None:
    results = [RewardResult(score=1.0, reason="ok"), RewardResult.unscorable("no gold")]
    payload = openrlhf_payload(results, [None, "prompt not found"], unscorable_score=-1.0)
    assert payload["rewards"] == payload["scores"] == [1.0, -1.0]
    assert payload["extra_logs"] == {"unscorable": [0.0, 1.0]}
    assert payload["reasons"] == ["ok", "no gold (prompt not found)"]


# -- admission and metrics -----------------------------------------------------------------------------------
def test_admission_queues_up_to_the_limit_then_refuses() -> None:
    async def scenario() -> None:
        admission = Admission(workers=1, max_queue=1)
        await admission.acquire()
        waiting = asyncio.ensure_future(admission.acquire())
        await asyncio.sleep(0)
        assert admission.queued == 1 and not waiting.done()
        with pytest.raises(QueueFull) as refused:
            await admission.acquire()
        assert refused.value.queued == 1 and refused.value.retry_after_s >= 1
        admission.release(0.5)
        await asyncio.wait_for(waiting, 1)
        assert admission.active == 1 and admission.queued == 0
        admission.release()
        assert admission.idle

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "reason, kind",
    [
        ("timeout: symbolic comparison exceeded 5 s", "timeout"),
        ("deadline: not scored within 1.5 s", "deadline"),
        ("column 'solution' has 1 value for 2 completions", "column '…' has n value for n completions"),
        ("completion is int, not text", "completion is int, not text"),
        ("", "no reason"),
    ],
)
def test_unscorable_reasons_are_counted_by_kind(reason: str, kind: str) -> None:
    assert reason_kind(reason) == kind


def test_reason_kinds_are_bounded_per_reward() -> None:
    metrics = ServeMetrics()
    results = [RewardResult.unscorable(f"kind{chr(65 + i % 26)}{chr(65 + i // 26)}: x") for i in range(120)]
    metrics.observe_samples("r", results, [0.0] * len(results))
    text = metrics.render().decode()
    assert 'reason="other"' in text
    assert text.count("rewardsmith_unscorable_total{") == 51


# -- the command line ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec, extra, message",
    [
        (None, (), "no such reward spec file"),
        ("name: no_such_reward\n", (), "unknown reward 'no_such_reward'"),
        ("rewards: [think_format]\n", ("--openrlhf-reward", "math"), "--openrlhf-reward 'math' is not served"),
        ("rewards: [think_format]\n", ("--workers", "0"), "invalid serve settings: workers"),
        ("rewards: [think_format]\n", ("--settings", '{"colour": 1}'), "invalid serve settings: colour"),
        ("rewards: [think_format\n", (), "not valid YAML"),
    ],
)
def test_serve_command_refuses_bad_setups_with_one_line(tmp_path, capsys, spec, extra, message) -> None:
    from rewardsmith.cli import main

    path = tmp_path / "spec.yaml"
    if spec is not None:
        path.write_text(spec)
    assert main(["serve", "--spec", str(path), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rewardsmith: error: ") and message in err and "\n" not in err


def test_rewards_listing_hides_secrets() -> None:
    client = {"backend": "openai", "model": "m", "api_key": "sk-live"}
    served = build_served({"name": "llm_judge", "config": {"client": client}})
    described = served["llm_judge"].describe("llm_judge")
    assert described["config"]["client"]["api_key"] == "***"
    assert "sk-live" not in str(described)


def test_a_waiter_woken_by_a_release_still_holds_its_queue_place():
    async def scenario() -> tuple[str, str, int]:
        admission = Admission(workers=1, max_queue=1)
        await admission.acquire()  # running
        woken = asyncio.ensure_future(admission.acquire())
        await asyncio.sleep(0)  # queued: the system is full
        # Two requests arrive in callbacks scheduled before the release wakes the waiter, as on a busy loop.
        third, fourth = asyncio.ensure_future(admission.acquire()), asyncio.ensure_future(admission.acquire())
        admission.release()
        await asyncio.sleep(0)
        outcomes = []
        for task in (third, fourth):
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=0.2)
                outcomes.append("admitted")
            except QueueFull:
                outcomes.append("refused")
            except asyncio.TimeoutError:
                outcomes.append("queued")
        await asyncio.wait_for(woken, timeout=1)
        in_system = admission.active + admission.queued
        for task in (third, fourth):
            task.cancel()
        return outcomes[0], outcomes[1], in_system

    # the woken waiter runs, the third takes the one queue place, the fourth is refused: never past max_queue
    assert asyncio.run(scenario()) == ("queued", "refused", 2)
