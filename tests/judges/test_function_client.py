"""FunctionClient, the judge test double: a handler behind the real strategies and the real managed client."""

from __future__ import annotations

import asyncio
import math

import pytest

from rewardsmith.judges.base import ChatClient, ChatParams, ChatResult, JudgeError, TokenLogprob
from rewardsmith.judges.cache import RequestCache
from rewardsmith.judges.clients.factory import ManagedChatClient
from rewardsmith.judges.clients.function import FunctionClient
from rewardsmith.judges.pairwise import PairwiseJudge

ASK = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "a or b?"}]


def test_a_text_answer_becomes_a_chat_result_and_every_request_is_kept() -> None:
    client = FunctionClient(lambda messages, params: messages[-1]["content"].upper(), model="upper")
    assert isinstance(client, ChatClient)
    result = client.complete(ASK, ChatParams(max_tokens=4))
    assert (result.text, result.model, result.finish_reason) == ("A OR B?", "upper", "stop")
    assert asyncio.run(client.acomplete(ASK, ChatParams())).text == "A OR B?"
    assert [r.messages for r in client.requests] == [ASK, ASK]
    assert [r.params.max_tokens for r in client.requests] == [4, 16]
    assert client.requests[0].text == "Be brief.\na or b?"


def test_a_handler_cannot_change_what_was_recorded() -> None:
    def meddle(messages, params):
        messages[-1]["content"] = "changed"
        return "ok"

    client = FunctionClient(meddle)
    client.complete(ASK, ChatParams())
    assert client.requests[0].messages == ASK and ASK[-1]["content"] == "a or b?"


def test_async_handlers_serve_acomplete_only() -> None:
    async def later(messages, params):
        await asyncio.sleep(0)
        return ChatResult(text="B", model="")

    client = FunctionClient(later, model="async")
    assert asyncio.run(client.acomplete(ASK, ChatParams())).model == "async"
    with pytest.raises(TypeError, match="async handler answers acomplete"):
        client.complete(ASK, ChatParams())
    with pytest.raises(TypeError, match="must answer a ChatResult or a str, not int"):
        FunctionClient(lambda messages, params: 1).complete(ASK, ChatParams())


def test_a_real_strategy_reads_the_handlers_logprobs_and_outages() -> None:
    """PairwiseJudge asks both orders; the handler prefers whichever response is 'GOOD' by log-probs."""

    def prefer_good(messages, params):
        text = "\n".join(m["content"] for m in messages)
        p = 0.9 if text.find("GOOD") < text.find("BAD") else 0.1
        top = {"A": math.log(p), "B": math.log(1 - p)}
        token = "A" if p > 0.5 else "B"
        return ChatResult(text=token, logprobs=[TokenLogprob(token=token, logprob=top[token], top=top)])

    client = FunctionClient(prefer_good)
    verdict = PairwiseJudge(client).judge("Which is better?", "GOOD", "BAD")
    assert verdict.winner == "a" and verdict.prob_a == pytest.approx(0.9) and not verdict.flipped
    assert len(client.requests) == 2

    def outage(messages, params):
        raise JudgeError("endpoint down")

    failed = PairwiseJudge(FunctionClient(outage)).judge("Which is better?", "GOOD", "BAD")
    assert failed.prob_a is None and failed.winner is None


def test_the_managed_client_caches_and_counts_around_it(tmp_path) -> None:
    client = FunctionClient(lambda messages, params: "A", model="cached")
    managed = ManagedChatClient(client, cache=RequestCache(tmp_path / "cache"))
    for _ in range(3):
        assert managed.complete(ASK, ChatParams()).text == "A"
    assert len(client.requests) == 1  # the cache answered the other two
    report = managed.report()
    assert (report.requests, report.cache_hits) == (1, 2)
