"""Endpoint faults a real server cannot be made to produce: 429, 500, timeouts, malformed and cut bodies,
unparseable and truncated answers. The client is the real one (openai SDK over HTTP on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import math
import os
import re
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rewardsmith.judges.base import ChatParams, JudgeError
from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.pairwise import PairwiseJudge
from rewardsmith.judges.scale import ScaleJudge
from rewardsmith.registry import get_reward
from tests.support.judge_prompts import shown_as
from tests.support.timing import slack

MESSAGES = [{"role": "user", "content": "Which is better? Answer A or B."}]


def client_for(server, **kwargs):
    options = {"timeout": 0.5, "max_retries": 3, **kwargs}
    client = make_client("openai", model="fault-judge", base_url=server.base_url, **options)
    client.transport.backoff = 0.01  # keep retries fast in tests
    return client


@pytest.mark.parametrize("fault", ["429", "500", "timeout", "malformed", "cut"])
def test_transient_fault_is_retried_then_answered(fault_server, fault):
    fault_server.push(fault)
    client = client_for(fault_server)
    result = client.complete(MESSAGES, ChatParams(max_tokens=4))
    assert result.text == "A"
    assert len(fault_server.requests) == 2  # the fault, then the retry
    assert client.transport.stats.retries == 1


@pytest.mark.parametrize("fault", ["429", "500", "malformed"])
def test_persistent_fault_raises_judge_error_after_retries(fault_server, fault):
    fault_server.push(*[fault] * 4)
    client = client_for(fault_server)
    with pytest.raises(JudgeError, match="gave up after 4 attempts"):
        client.complete(MESSAGES, ChatParams(max_tokens=4))
    assert len(fault_server.requests) == 4
    assert client.report().errors == 1


def test_client_error_is_not_retried(fault_server):
    fault_server.push("400")
    client = client_for(fault_server)
    with pytest.raises(JudgeError, match="HTTP 400"):
        client.complete(MESSAGES, ChatParams())
    assert len(fault_server.requests) == 1


def test_async_path_retries_too(fault_server):
    fault_server.push("500", "429")
    client = client_for(fault_server)
    result = asyncio.run(client.acomplete(MESSAGES, ChatParams(max_tokens=4)))
    assert result.text == "A"
    assert len(fault_server.requests) == 3


# Both presentation orders are asked at once, so answers are scripted per order, not per arrival:
# for the pair ("2+2?", "4", "5") the A-first order shows "4" first, the B-first order "5".
A_FIRST, B_FIRST = shown_as("response-A", "4"), shown_as("response-A", "5")


def push_orders(server, ab, ba, *, a="4", b="5"):
    server.push_when(shown_as("response-A", a), *ab)
    server.push_when(shown_as("response-A", b), *ba)


# Verdict table: what one order's answer becomes.
PAIRWISE_ANSWERS = [
    # (A-first script, B-first script; expected winner; expected reason fragment)
    (["answer:banana"], ["answer:banana"], None, "no verdict in answer"),
    (["answer:The better response is..."], ["answer:The better response is..."], None, "cut off"),
    (["answer:A"], ["answer:banana"], None, "B-first: no verdict"),
    (["500"] * 4, ["answer:A"], None, "A-first: fault-judge"),
    (["answer:A"], ["answer:A"], "tie", "disagree"),  # always the first position: flipped
    (["answer:A"], ["answer:B"], "a", "agree"),
    (["answer:B"], ["answer:A"], "b", "agree"),
    # the article "a" is not option A; MT-Bench brackets are a verdict; naming both labels is no verdict
    (["answer:The winner is B. It gives a better answer a user can follow."], ["answer:A"], "b", "agree"),
    (["answer:Verdict: [[B]]"], ["answer:[[A]]"], "b", "agree"),
    (["answer:A or B, hard to say"], ["answer:A"], None, "A-first: names both A and B"),
    (["answer:B"], ["answer:Response A is better in tone, but B is better overall."], None, "B-first: conflicting"),
    # hedges name both labels: no verdict, with or without log-probs
    (["answer:Neither A nor B is better."], ["answer:B"], None, "A-first: names both A and B"),
    (["answer:A"], ["answer:Both A and B are equally good."], None, "B-first: names both A and B"),
]


@pytest.mark.parametrize("use_logprobs", [False, True], ids=["parsed", "logprobs"])
@pytest.mark.parametrize(("ab", "ba", "winner", "reason"), PAIRWISE_ANSWERS)
def test_pairwise_abstains_explicitly_never_picks_a_winner(fault_server, ab, ba, winner, reason, use_logprobs):
    push_orders(fault_server, ab, ba)
    judge = PairwiseJudge(client_for(fault_server, timeout=10), use_logprobs=use_logprobs)
    verdict = judge.judge("2+2?", "4", "5")
    assert verdict.winner == winner
    assert verdict.abstained is (winner is None)
    assert reason in verdict.reason
    assert verdict.flipped is (winner == "tie")
    assert all(bool(r.get("logprobs")) is use_logprobs for r in fault_server.requests)


# With log-probs on, one order's answer (the server puts P = 0.7 on the option letter it writes, unless
# ``answer@P`` says otherwise): (answer, P(first) or None for abstain, source, reason fragment).
LOGPROB_ORDERS = [
    ("answer:A", 0.7, "logprobs", ""),
    ("answer:B", 0.3, "logprobs", ""),
    ("answer@0.9:Verdict: [[B]]", 0.1, "logprobs", ""),
    # the soft label is read at the token that states the verdict, not at the first letter mentioned
    ("answer:I think A is nice. Verdict: B", 0.3, "logprobs", ""),
    ('answer:{"verdict": "A"}', 0.7, "logprobs", ""),
    # hedges: the text states no single verdict, so the first letter's probability is no verdict either
    ("answer:Neither A nor B is better.", None, "abstain", "names both A and B"),
    ("answer:A or B, hard to say.", None, "abstain", "names both A and B"),
    ("answer:Both A and B are equally good.", None, "abstain", "names both A and B"),
    # the text says A while that token's probabilities favour B: one answer, two readings
    ("answer@0.3:A", None, "abstain", "log-probs and text disagree"),
    ("answer@0.4:The winner is B", None, "abstain", "log-probs and text disagree"),
    ("answer:The better response is...", None, "abstain", "cut off"),
]


@pytest.mark.parametrize(("answer", "prob_first", "source", "reason"), LOGPROB_ORDERS)
def test_logprob_soft_label_reads_the_verdict_token(fault_server, answer, prob_first, source, reason):
    from rewardsmith.audit.metrics import order_pick_first

    push_orders(fault_server, [answer], [answer])
    verdict = PairwiseJudge(client_for(fault_server, timeout=10)).judge("2+2?", "4", "5")
    assert [r["logprobs"] for r in fault_server.requests] == [True, True]
    for order in (verdict.ab, verdict.ba):
        assert order.source == source
        assert reason in order.reason
        if prob_first is None:
            assert order.prob_first is None and order.choice is None
            assert math.isnan(order_pick_first(order))  # an audit counts no slot pick
        else:
            assert order.prob_first == pytest.approx(prob_first)
            assert order.choice == ("first" if prob_first > 0.5 else "second")
    assert verdict.abstained is (prob_first is None)
    assert verdict.winner == (None if prob_first is None else "tie")  # the same answer in both orders


def test_pairwise_soft_label_from_logprobs(fault_server):
    # The server gives P(A)=0.7, P(B)=0.3 at the answer token in both orders: pure position preference.
    judge = PairwiseJudge(client_for(fault_server, timeout=10))
    verdict = judge.judge("2+2?", "4", "5")
    assert verdict.ab.source == verdict.ba.source == "logprobs"
    assert verdict.ab.prob_first == pytest.approx(0.7)
    assert verdict.prob_a == pytest.approx(0.5)  # (0.7 + (1 - 0.7)) / 2
    assert verdict.flipped
    assert [r["logprobs"] for r in fault_server.requests] == [True, True]


def test_cot_verdict_is_clamped(fault_server):
    push_orders(fault_server, ["answer:A is clearer. Verdict: A"], ["answer:Verdict: B"], a="x", b="y")
    verdict = PairwiseJudge(client_for(fault_server, timeout=10), chain_of_thought=True).judge("q", "x", "y")
    assert (verdict.ab.prob_first, verdict.ba.prob_first) == (0.6, 0.4)
    assert verdict.prob_a == pytest.approx(0.6)
    assert not verdict.flipped
    assert all("logprobs" not in r for r in fault_server.requests)


def test_sync_judge_asks_both_orders_at_once(fault_server):
    judge = PairwiseJudge(client_for(fault_server, timeout=10))
    judge.judge("warm", "up", "call")  # the SDK import and the first connection are not what is timed
    delay = min(3.0, slack(0.6))  # long enough that request overhead on a loaded machine stays small beside it
    fault_server.answer_delay_s = delay
    started = time.monotonic()
    verdict = judge.judge("2+2?", "4", "5")
    elapsed = time.monotonic() - started
    assert verdict.ab.source == verdict.ba.source == "logprobs"
    assert elapsed < 1.6 * delay, f"two orders took {elapsed:.2f}s at {delay}s per request"
    assert fault_server.max_in_flight == 2

    async def inside_a_running_loop():
        return judge.judge("2+2?", "4", "5")

    started = time.monotonic()
    assert asyncio.run(inside_a_running_loop()).ab.source == "logprobs"
    assert time.monotonic() - started < 1.6 * delay
    with ThreadPoolExecutor(3) as pool:
        verdicts = list(pool.map(lambda i: judge.judge(f"q{i}", "4", "5"), range(3)))
    assert all(v.prob_a == pytest.approx(0.5) for v in verdicts)


def test_rubric_truncated_and_malformed_answers_abstain(fault_server):
    fault_server.push("answer:My rating would be...", "answer:excellent", "answer:Score: 4")
    judge = ScaleJudge(client_for(fault_server), scale=5, use_logprobs=False)
    cut, malformed, ok = (judge.judge("p", "r") for _ in range(3))
    assert cut.score is None and "cut off" in cut.reason
    assert malformed.score is None and "no score" in malformed.reason
    assert ok.score == 4.0 and ok.normalized == pytest.approx(0.75)


def test_rubric_keeps_decimal_and_bracketed_scores(fault_server):
    fault_server.push("answer:Rating: 4.5", "answer:Rating: [[7]]", "answer:Score: 2. Actually, Score: 4")
    judge = ScaleJudge(client_for(fault_server), scale=10, use_logprobs=False)
    decimal, bracketed, conflicting = (judge.judge("p", "r") for _ in range(3))
    assert decimal.score == 4.5 and decimal.normalized == pytest.approx(3.5 / 9)
    assert bracketed.score == 7.0
    assert conflicting.score is None and "conflicting" in conflicting.reason


def test_cache_serves_rerun_with_zero_requests(fault_server, tmp_path):
    judge = PairwiseJudge(client_for(fault_server, cache_dir=tmp_path))
    first = judge.judge("2+2?", "4", "5")
    assert len(fault_server.requests) == 2
    rerun_client = client_for(fault_server, cache_dir=tmp_path)  # a new process would open the same file
    again = PairwiseJudge(rerun_client).judge("2+2?", "4", "5")
    assert len(fault_server.requests) == 2
    assert again.prob_a == first.prob_a
    assert again.ab.raw == first.ab.raw
    report = rerun_client.report()
    assert (report.requests, report.cache_hits) == (0, 2)
    assert rerun_client.cache.hits == 2


def test_failures_are_not_cached(fault_server, tmp_path):
    fault_server.push(*["500"] * 4)
    client = client_for(fault_server, cache_dir=tmp_path)
    with pytest.raises(JudgeError):
        client.complete(MESSAGES, ChatParams())
    assert client.complete(MESSAGES, ChatParams()).text == "A"
    assert len(client.cache) == 1


def test_concurrency_is_bounded(fault_server):
    fault_server.answer_delay_s = 0.2
    client = client_for(fault_server, concurrency=2, timeout=5)

    async def run():
        prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(6)]
        return await asyncio.gather(*(client.acomplete(m, ChatParams()) for m in prompts))

    results = asyncio.run(run())
    assert len(results) == 6
    assert fault_server.max_in_flight == 2


def test_rpm_limit_paces_requests(fault_server, monkeypatch):
    monkeypatch.setattr("rewardsmith.judges.limits.WINDOW_S", 1.0)  # a one-second "minute" keeps the test short
    client = client_for(fault_server, rpm=2)
    started = time.monotonic()
    for i in range(5):
        client.complete([{"role": "user", "content": f"q{i}"}], ChatParams())
    elapsed = time.monotonic() - started
    assert elapsed >= 2.0  # 5 requests at 2 per window need at least 2 further windows
    gaps = [b - a for a, b in zip(fault_server.times, fault_server.times[1:], strict=False)]
    assert gaps[1] >= 0.8 and gaps[3] >= 0.8  # the 3rd and 5th requests waited for the window to open


def test_cost_accounting_uses_configured_prices(fault_server):
    client = client_for(fault_server, prices={"fault-judge": {"input": 1.0, "output": 2.0}})
    client.complete(MESSAGES, ChatParams())
    report = client.report()
    assert report.requests == 1 and report.prompt_tokens > 0
    expected = (report.prompt_tokens * 1.0 + report.completion_tokens * 2.0) / 1e6
    assert report.cost_usd == pytest.approx(expected)
    assert "1 sent" in report.summary()


# Verdict table for the reward: endpoint behaviour -> score / None with reason.
REWARD_CASES = [
    (["answer:Score: 5"], 1.0, "rubric 5.00/5"),
    (["answer:Score: 1"], 0.0, "rubric 1.00/5"),
    (["answer:no idea"], None, "judge abstained"),
    (["500"] * 4, None, "gave up"),
]


@pytest.mark.parametrize(("script", "score", "reason"), REWARD_CASES)
def test_llm_judge_reward_none_with_reason_on_failure(fault_server, script, score, reason):
    fault_server.push(*script)
    reward = get_reward(
        "llm_judge",
        {
            "mode": "rubric",
            "use_logprobs": False,
            "client": {
                "backend": "openai",
                "model": "m",
                "base_url": fault_server.base_url,
                "timeout": 0.5,
                "max_retries": 3,
            },
        },
    )
    reward.client.transport.backoff = 0.01
    [result] = reward.details(["4"], prompts=["2+2?"])
    assert result.score == score
    assert reason in result.reason


def test_llm_judge_reward_timeout_bounds_a_stuck_endpoint(fault_server):
    fault_server.push(*["timeout"] * 10)
    reward = get_reward(
        "llm_judge",
        {
            "sample_timeout": 0.5,
            "client": {"backend": "openai", "model": "m", "base_url": fault_server.base_url, "timeout": 5.0},
        },
    )
    started = time.monotonic()
    assert reward(["4"], prompts=["2+2?"]) == [None]
    assert time.monotonic() - started < 2.0


def test_llm_judge_pairwise_against_reference_column(fault_server):
    fault_server.push("answer:A", "answer:B", "answer:A", "answer:A")
    reward = get_reward(
        "llm_judge",
        {
            "mode": "pairwise",
            "use_logprobs": False,
            # One request at a time (a FIFO semaphore): the scripted answers reach the orders in sequence.
            "client": {"backend": "openai", "model": "m", "base_url": fault_server.base_url, "concurrency": 1},
        },
    )
    results = reward.details(["4", "four", "x"], prompts=["2+2?"] * 3, reference=["5", "5", None])
    assert [r.score for r in results[:2]] == [1.0, 0.5]
    assert [r.flipped for r in results[:2]] == [False, True]
    assert results[2].score is None and "no reference" in results[2].reason
    assert len(fault_server.requests) == 4


def test_cli_judge_pair_prints_verdict(fault_server, capsys):
    import json

    from rewardsmith.cli.main import main

    push_orders(fault_server, ["answer:A"], ["answer:B"])
    code = main(["judge", "pair", "--judge", "openai:m", "--judge-base-url", fault_server.base_url,
                 "--prompt", "2+2?", "--a", "4", "--b", "5"])  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    verdict = json.loads(captured.out)  # stdout is one JSON document; the usage line goes to stderr
    assert verdict["winner"] == "a" and verdict["flipped"] is False
    assert verdict["usage"]["requests"] == 2
    assert "2 sent" in captured.err


def test_usage_counts_failed_calls_and_retries(fault_server, tmp_path):
    """calls = sent + cached; failed calls are part of sent; retries are counted apart, and every HTTP
    request the server saw is either a sent call or a retry."""
    client = client_for(fault_server, max_retries=3, cache_dir=tmp_path, timeout=10)
    for i in (0, 1):  # the A-first order of pairs 0 and 1 fails for good: 4 attempts each
        fault_server.push_when(shown_as("response-A", f"x{i}"), *["500"] * 4)
    fault_server.push_when(shown_as("response-A", "y2"), "429")  # one order of pair 2 answers on its second attempt
    judge = PairwiseJudge(client, use_logprobs=False)
    verdicts = [judge.judge(f"q{i}", f"x{i}", f"y{i}") for i in range(4)]
    assert [v.abstained for v in verdicts] == [True, True, False, False]
    report = client.report()
    assert (report.calls, report.requests, report.cache_hits, report.errors, report.retries) == (8, 8, 0, 2, 7)
    assert len(fault_server.requests) == report.requests + report.retries
    assert report.by_model["fault-judge"]["errors"] == 2 and report.by_model["fault-judge"]["retries"] == 7
    assert "judge calls: 8 (8 sent, 0 cached = 0%; 2 of the sent failed); retries: 7" in report.summary()

    rerun = [judge.judge(f"q{i}", f"x{i}", f"y{i}") for i in range(4)]  # 6 answers cached, 2 failed calls re-sent
    assert not any(v.abstained for v in rerun[2:]) and rerun[0].winner == "tie"
    report = client.report()
    assert (report.calls, report.requests, report.cache_hits, report.errors, report.retries) == (16, 10, 6, 2, 7)
    assert len(fault_server.requests) == report.requests + report.retries


def test_managed_client_pickles_and_keeps_working(fault_server, tmp_path):
    import pickle

    client = client_for(fault_server, cache_dir=tmp_path, rpm=1000, concurrency=3)
    client.complete(MESSAGES, ChatParams())
    clone = pickle.loads(pickle.dumps(client))
    assert clone.complete(MESSAGES, ChatParams()).cached  # same on-disk cache
    assert clone.complete([{"role": "user", "content": "new"}], ChatParams()).text == "A"
    assert len(fault_server.requests) == 2


def test_endpoint_without_logprobs_falls_back_to_parsed_verdicts(fault_server):
    fault_server.refuse_logprobs = True
    push_orders(fault_server, ["answer:A"], ["answer:B"])
    client = client_for(fault_server, timeout=10)
    verdict = PairwiseJudge(client).judge("2+2?", "4", "5")
    assert (verdict.ab.source, verdict.ba.source) == ("parsed", "parsed")
    assert verdict.winner == "a"
    asked = [bool(r.get("logprobs")) for r in fault_server.requests]
    # each order that went out before the refusal was seen asked once with log-probs, then again without
    assert 1 <= asked.count(True) <= 2 and asked.count(False) == 2
    assert client.transport.logprobs_supported is False
    assert client.report().retries == asked.count(True)


def _embedded_server_children() -> set[int]:
    """Live child processes of this test process that run the embedded llama.cpp server launcher."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = re.search(r"^PPid:\s+(\d+)", status, flags=re.MULTILINE)
        state = re.search(r"^State:\s+(\S)", status, flags=re.MULTILINE)
        alive = state is not None and state.group(1) != "Z"
        if (
            parent
            and int(parent.group(1)) == os.getpid()
            and alive
            and b"rewardsmith.judges.clients.embedded_child" in cmdline
        ):
            found.add(int(entry.name))
    return found


@pytest.mark.llama
@pytest.mark.slow
@pytest.mark.parametrize("caller", ["threads", "asyncio"])
def test_concurrent_first_requests_start_one_embedded_server(caller):
    from rewardsmith.judges.clients.embedded import EmbeddedServer, EmbeddedServerClient, llama_server_missing

    missing = llama_server_missing()
    if missing:
        pytest.skip(f"llama.cpp server unavailable: {missing}")
    requests = 4
    before = _embedded_server_children()
    client = EmbeddedServerClient(timeout=60, max_retries=1, server=EmbeddedServer(startup_timeout=120))
    params = ChatParams(max_tokens=2)
    try:
        if caller == "threads":
            barrier = threading.Barrier(requests)

            def first_request(_: int):
                barrier.wait(timeout=30)
                return client.complete(MESSAGES, params)

            with ThreadPoolExecutor(requests) as pool:
                results = list(pool.map(first_request, range(requests)))
        else:

            async def first_requests():
                return await asyncio.gather(*(client.acomplete(MESSAGES, params) for _ in range(requests)))

            results = asyncio.run(first_requests())
        started = _embedded_server_children() - before
        assert len(results) == requests and all(r.model for r in results)
        assert len(started) == 1, f"{len(started)} servers started for {requests} concurrent first requests"
        assert started == {client.server.process.pid}
    finally:
        client.close()
        deadline = time.monotonic() + 20
        while _embedded_server_children() - before and time.monotonic() < deadline:
            time.sleep(0.2)
        leftover = _embedded_server_children() - before
        for pid in leftover:  # only processes this test started
            os.kill(pid, signal.SIGKILL)
    assert not leftover, f"close() left {len(leftover)} server(s) running"
