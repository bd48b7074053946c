"""The likelihood judge: its math, its verdicts, where it is the default, and its log-likelihoods from the tiny
in-process model and from the real embedded llama.cpp server (``-m llama``)."""

from __future__ import annotations

import asyncio
import math

import pytest

from rewardsmith.constitutions.loader import load_constitution
from rewardsmith.constitutions.pairs import infrastructure_failure
from rewardsmith.constitutions.runners import build_pairwise_judge
from rewardsmith.judges.base import ChatParams, JudgeError
from rewardsmith.judges.clients.embedded import INPROCESS_MODEL_NAME, SERVER_MODEL_NAME
from rewardsmith.judges.clients.factory import ManagedChatClient, make_client
from rewardsmith.judges.clients.function import FunctionClient
from rewardsmith.judges.likelihood_default import embedded_default_judge
from rewardsmith.judges.pairwise import PairwiseJudge
from rewardsmith.judges.pointwise import (
    ContinuationScore,
    LikelihoodJudge,
    LikelihoodScores,
    TransformersLikelihood,
    pair_probability,
)


def score(logprob: float, tokens: int) -> ContinuationScore:
    return ContinuationScore(logprob=logprob, tokens=tokens)


def test_pair_probability_is_the_per_token_probability_ratio():
    a, b = score(-2.0, 4), score(-6.0, 6)  # means -0.5 and -1.0
    assert pair_probability(a, b) == pytest.approx(1 / (1 + math.exp(-0.5)))
    assert pair_probability(b, a) == pytest.approx(1 - pair_probability(a, b))
    assert pair_probability(a, b, temperature=0.25) == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert pair_probability(score(-3.0, 3), score(-30.0, 30)) == pytest.approx(0.5)  # length-neutral
    assert pair_probability(a, score(0.0, 0)) is None
    assert pair_probability(score(0.0, 10), score(-1e6, 1)) == pytest.approx(1.0)


def never_chat(messages, params):  # pragma: no cover - the likelihood judge never chats
    raise AssertionError("the likelihood judge must not ask for a completion")


class FakeTransport(FunctionClient):
    """A transport that scores continuations from a table (mean log-prob per token) and keeps its scoring requests
    in ``scored``; it refuses to chat."""

    def __init__(self, means: dict[str, float], fail: bool = False) -> None:
        super().__init__(never_chat, model="fake-lm")
        self.means, self.fail, self.scored = means, fail, []

    def loglikelihood(self, messages, continuations):
        self.scored.append((messages, list(continuations)))
        if self.fail:
            raise JudgeError("server gone")
        tokens = [len(c.split()) for c in continuations]
        return LikelihoodScores(
            scores=[score(self.means[c] * n, n) for c, n in zip(continuations, tokens, strict=True)],
            prompt_tokens=7,
            evaluated_tokens=7 + sum(tokens),
        )


def test_verdicts_have_no_position_and_one_request():
    transport = FakeTransport({"Canberra is the capital.": -0.2, "Sydney is the capital.": -0.9})
    client = ManagedChatClient(transport)
    judge = LikelihoodJudge(client)
    verdict = judge.judge("Capital of Australia?", "Sydney is the capital.", "Canberra is the capital.", question="Q")
    assert verdict.winner == "b" and not verdict.flipped and not verdict.abstained
    assert verdict.prob_a == pytest.approx(1 / (1 + math.exp(0.7)))
    assert verdict.ab.prob_first == pytest.approx(verdict.prob_a)
    assert verdict.ba.prob_first == pytest.approx(1 - verdict.prob_a)
    assert (verdict.ab.choice, verdict.ba.choice) == ("second", "first")  # both orders pick b
    assert verdict.principle == "Q" and verdict.model == "fake-lm"
    assert len(transport.scored) == 1
    messages, continuations = transport.scored[0]
    assert messages == [{"role": "user", "content": "Capital of Australia?"}]  # the principle is not shown
    assert continuations == ["Sydney is the capital.", "Canberra is the capital."]
    assert client.report().requests == 1 and client.report().prompt_tokens == 7 + 8

    again = asyncio.run(judge.ajudge("Capital of Australia?", "Canberra is the capital.", "Sydney is the capital."))
    assert again.prob_a == pytest.approx(1 - verdict.prob_a)

    system = LikelihoodJudge(client, system="Be brief.")
    system.judge("Capital?", "Sydney is the capital.", "Canberra is the capital.")
    assert transport.scored[-1][0][0] == {"role": "system", "content": "Be brief."}


def test_an_endpoint_failure_is_an_infrastructure_failure_and_empty_is_an_abstain():
    failing = LikelihoodJudge(ManagedChatClient(FakeTransport({}, fail=True)))
    verdict = failing.judge("p", "a", "b")
    assert verdict.abstained and verdict.prob_a is None
    assert "server gone" in infrastructure_failure(verdict)  # the pairs pipeline retries it, never drops it

    judge = LikelihoodJudge(ManagedChatClient(FakeTransport({"x": -1.0})))
    empty = judge.verdict(LikelihoodScores(scores=[score(-1.0, 1), score(0.0, 0)]), None)
    assert empty.abstained and empty.ab.source == "abstain" and infrastructure_failure(empty) is None
    with pytest.raises(ValueError, match="temperature"):
        LikelihoodJudge(ManagedChatClient(FakeTransport({})), temperature=0)


def test_a_transport_without_log_likelihoods_is_refused():
    class ChatOnly:
        model = "chat-only"

    with pytest.raises(TypeError, match="cannot score log-likelihoods"):
        LikelihoodJudge(ChatOnly())


@pytest.mark.parametrize("model", [SERVER_MODEL_NAME, INPROCESS_MODEL_NAME])
def test_the_embedded_judge_defaults_to_likelihood_unless_a_letter_judge_is_asked_for(model, tmp_path):
    constitution = load_constitution("helpful-harmless")
    client = make_client("openai", model=model, base_url="http://127.0.0.1:9/v1")  # never contacted here
    judge = build_pairwise_judge(client, constitution, state_dir=tmp_path)
    assert isinstance(judge, LikelihoodJudge) and "16/18" in judge.note
    for options in ({"template": "pairwise"}, {"chain_of_thought": True}, {"use_logprobs": False}):
        assert isinstance(build_pairwise_judge(client, constitution, state_dir=tmp_path, **options), PairwiseJudge)
    other = make_client("openai", model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1")
    assert embedded_default_judge(other, template=None, use_logprobs=True, chain_of_thought=False) is None
    assert isinstance(build_pairwise_judge(other, constitution, state_dir=tmp_path), PairwiseJudge)


def test_transformers_log_likelihoods_match_a_direct_forward_pass(tiny_model_dir):
    import torch

    from rewardsmith.judges.clients.transformers_local import TransformersChatClient

    transport = TransformersChatClient(tiny_model_dir)
    messages = [{"role": "user", "content": "Write 3 digits."}]
    result = TransformersLikelihood(transport).loglikelihood(messages, ["123", "abc def", ""])
    tokenizer, model = transport.load()
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    for text, got in zip(["123", "abc def"], result.scores, strict=False):
        ids = tokenizer(prompt + text, add_special_tokens=False)["input_ids"]
        n_prompt = len(tokenizer(prompt, add_special_tokens=False)["input_ids"])
        with torch.inference_mode():
            logprobs = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), dim=-1)
        expected = sum(float(logprobs[i - 1, ids[i]]) for i in range(n_prompt, len(ids)))
        assert got.tokens == len(ids) - n_prompt > 0
        assert got.logprob == pytest.approx(expected, abs=1e-4)
    assert result.scores[2].tokens == 0  # nothing to score: the judge abstains on it

    judge = LikelihoodJudge(ManagedChatClient(transport))
    verdict = judge.judge("Write 3 digits.", "123", "abc def")
    a, b = (s.mean for s in result.scores[:2])
    assert verdict.prob_a == pytest.approx(1 / (1 + math.exp(-(a - b))), abs=1e-4)


# -- the real embedded llama.cpp server ---------------------------------------------------------------


def server_judge(server) -> LikelihoodJudge:
    return LikelihoodJudge(make_client("openai", model=server.model, base_url=server.base_url))


@pytest.mark.llama
@pytest.mark.slow
def test_server_log_likelihoods_are_deterministic_and_leave_chat_completions_alone(embedded_server):
    client = make_client("openai", model=embedded_server.model, base_url=embedded_server.base_url)
    judge = LikelihoodJudge(client)
    chat = [{"role": "user", "content": "Name a colour."}]
    params = ChatParams(max_tokens=6, top_logprobs=3)
    before = client.complete(chat, params)

    prompt = "What is the capital of Australia?"
    responses = ["The capital of Australia is Canberra.", "The capital of Australia is Sydney, its largest city."]
    first = judge.score(prompt, responses)
    second = judge.score(prompt, list(reversed(responses)))
    assert [s.tokens for s in first.scores] == [s.tokens for s in reversed(second.scores)]
    assert all(s.tokens > 5 and s.logprob < 0 for s in first.scores)
    for x, y in zip(first.scores, reversed(second.scores), strict=True):
        assert x.logprob == pytest.approx(y.logprob, abs=1e-3)  # same tokens, same prefix: same value
    assert first.evaluated_tokens < first.prompt_tokens + sum(s.tokens for s in first.scores) + 2  # prefix reused

    after = client.complete(chat, params)  # the scoring left the model's cache consistent
    assert after.text == before.text
    assert after.logprobs[0].logprob == pytest.approx(before.logprobs[0].logprob, abs=1e-3)

    verdict = judge.judge(prompt, *responses)
    assert 0.0 < verdict.prob_a < 1.0 and not verdict.flipped
    assert verdict.ab.raw.startswith("mean log-prob per token")


@pytest.mark.llama
@pytest.mark.slow
def test_the_embedded_client_scores_through_its_own_server_and_concurrently():
    from rewardsmith.judges.clients.embedded import llama_server_missing

    if llama_server_missing():
        pytest.skip(llama_server_missing())
    client = make_client("embedded")
    try:
        judge = LikelihoodJudge(client)

        async def many():
            pairs = [(f"What is {i} + {i}?", f"{2 * i}", f"{2 * i + 1} apples") for i in range(4)]
            return await asyncio.gather(*(judge.ajudge(p, a, b) for p, a, b in pairs))

        verdicts = asyncio.run(many())
        assert all(v.prob_a is not None and not v.abstained for v in verdicts)
        assert client.report().requests == 4
    finally:
        client.close()


@pytest.mark.llama
@pytest.mark.slow
def test_a_server_without_the_route_is_a_clear_judge_error(fault_server):
    judge = LikelihoodJudge(make_client("openai", model="m", base_url=fault_server.base_url, api_key="x"))
    verdict = judge.judge("p", "a", "b")
    assert verdict.abstained and "does not score log-likelihoods" in infrastructure_failure(verdict)
