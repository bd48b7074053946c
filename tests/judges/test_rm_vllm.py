"""``reward_model`` against vLLM's pooling API (``/classify``, ``/pooling``) for a one-output reward model.

vLLM cannot run here (no GPU, and it cannot be installed offline), so the server is
:class:`tests.support.vllm_pooling_server.VLLMPoolingServer`: a real FastAPI/uvicorn server on 127.0.0.1 that
reproduces vLLM 0.33.0's wire format (request and response fields of ``vllm/entrypoints/pooling/base/protocol.py``,
``classify/protocol.py`` and ``pooling/protocol.py``; errors as ``serve/engine/protocol.py``'s ``ErrorResponse``)
and scores with the tiny classifier built offline, applying the chat template server side as vLLM does.
"""

from __future__ import annotations

import json
import math

import pytest

from rewardsmith.judges.base import JudgeError
from rewardsmith.judges.clients.reward_models import remote_protocol
from rewardsmith.judges.reward_model import (
    LocalRewardModel,
    RemoteRewardModel,
    RewardModelPairwiseJudge,
    VLLMRewardModel,
    make_reward_model,
    read_vllm_scores,
)
from rewardsmith.registry import get_reward
from rewardsmith.reward import ConfigError

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

PROMPTS = ["What is 2 + 2?", "Name a color.", "Say hello politely to the new neighbour.", "Count to 3."]
RESPONSES = ["4", "Blue, like the sky on a clear day.", "Hello!", "1, 2, 3"]


@pytest.fixture(scope="module")
def vllm_server(tiny_rm_dir):
    from tests.support.vllm_pooling_server import VLLMPoolingServer

    with VLLMPoolingServer(tiny_rm_dir) as server:
        yield server


@pytest.fixture
def server(vllm_server):
    vllm_server.bodies.clear()
    vllm_server.paths.clear()
    vllm_server.faults.clear()
    return vllm_server


@pytest.fixture(scope="module")
def local_scores(tiny_rm_dir):
    """The local reward model's logits, chat template and plain: what the server must give back."""
    chat = LocalRewardModel(str(tiny_rm_dir), batch_size=1).score(PROMPTS, RESPONSES)
    plain = LocalRewardModel(str(tiny_rm_dir), batch_size=1, use_chat_template=False).score(PROMPTS, RESPONSES)
    return chat, plain


def test_classify_sends_chat_messages_and_reads_the_logit(server, local_scores):
    reward = get_reward("reward_model", {"model": f"{server.base_url}/classify"})
    assert reward(RESPONSES, prompts=PROMPTS) == pytest.approx(local_scores[0], abs=1e-5)
    assert server.paths == ["classify"] * 4  # vLLM takes one conversation per request
    sent = sorted(server.bodies, key=lambda body: PROMPTS.index(body["messages"][0]["content"]))
    for body, prompt, response in zip(sent, PROMPTS, RESPONSES, strict=True):
        assert body == {
            "use_activation": False,
            "messages": [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}],
        }
    conversational = reward(
        [[{"role": "assistant", "content": r}] for r in RESPONSES],
        prompts=[[{"role": "user", "content": p}] for p in PROMPTS],
    )
    assert conversational == pytest.approx(local_scores[0], abs=1e-5)
    sigmoid = get_reward("reward_model", {"model": f"{server.base_url}/classify", "transform": "sigmoid"})
    assert sigmoid(RESPONSES[:1], prompts=PROMPTS[:1]) == pytest.approx([1 / (1 + math.exp(-local_scores[0][0]))])


def test_pooling_with_plain_texts_is_one_request(server, local_scores):
    config = {"model": f"{server.base_url}/pooling", "use_chat_template": False, "served_model": "tiny-rm"}
    reward = get_reward("reward_model", config)
    assert reward(RESPONSES, prompts=PROMPTS) == pytest.approx(local_scores[1], abs=1e-5)
    assert server.paths == ["pooling"]
    assert server.bodies == [
        {
            "use_activation": False,
            "model": "tiny-rm",
            "input": [f"{p}\n{r}" for p, r in zip(PROMPTS, RESPONSES, strict=True)],
            "add_special_tokens": False,
        }
    ]
    chat = get_reward("reward_model", {"model": f"{server.base_url}/pooling"})
    assert chat(RESPONSES, prompts=PROMPTS) == pytest.approx(local_scores[0], abs=1e-5)


def test_protocol_by_url_or_by_name(tiny_rm_dir):
    assert remote_protocol("http://h:8000/classify") == "vllm-classify"
    assert remote_protocol("http://h:8000/pooling/") == "vllm-pooling"
    assert remote_protocol("http://h:5000/get_reward") == "openrlhf"
    assert remote_protocol("http://h:5000/") == "openrlhf"
    assert remote_protocol("http://h:5000/get_reward", "vllm-pooling") == "vllm-pooling"
    assert isinstance(make_reward_model("http://h:5000/get_reward"), RemoteRewardModel)
    scorer = make_reward_model("http://h/rm", protocol="vllm-pooling", timeout=3, max_retries=1, batch_size=2)
    assert isinstance(scorer, VLLMRewardModel) and (scorer.endpoint, scorer.timeout) == ("pooling", 3)
    with pytest.raises(ConfigError, match="needs a server URL"):
        get_reward("reward_model", {"model": str(tiny_rm_dir), "protocol": "vllm-classify"})
    with pytest.raises(ValueError, match="needs an http"):
        make_reward_model(".", protocol="openrlhf")


def test_server_errors_make_the_batch_unscorable_never_zero(server, local_scores):
    url = f"{server.base_url}/classify"
    plain = {"model": url, "use_chat_template": False, "max_retries": 1}
    reward = get_reward("reward_model", plain)

    server.faults = ["500"]  # retried, then answered
    assert reward(RESPONSES, prompts=PROMPTS) == pytest.approx(local_scores[1], abs=1e-5)
    assert len(server.bodies) == 2

    server.faults = ["not-json", "not-json"]  # retried, still not JSON
    results = reward.details(RESPONSES, prompts=PROMPTS)
    assert all(r.score is None and "JSONDecodeError" in r.reason and "2 attempts" in r.reason for r in results)

    before = len(server.bodies)
    server.faults = ["400"]  # the request's fault: not retried, vLLM's message in the reason
    results = reward.details(RESPONSES, prompts=PROMPTS)
    assert all(r.score is None and "HTTP 400: This model's maximum context length" in r.reason for r in results)
    assert len(server.bodies) == before + 1

    wrong_name = get_reward("reward_model", plain | {"served_model": "other"})
    results = wrong_name.details(RESPONSES[:1], prompts=PROMPTS[:1])
    assert results[0].score is None and "HTTP 404" in results[0].reason and "does not exist" in results[0].reason

    server.faults = ["two-classes"]
    results = reward.details(RESPONSES, prompts=PROMPTS)
    assert all(
        r.score is None and "'probs' of a reward model is one number, got 2 outputs" in r.reason for r in results
    )
    server.faults = ["short"]
    results = reward.details(RESPONSES, prompts=PROMPTS)
    assert all(r.score is None and "expected 4 results under 'data'" in r.reason for r in results)

    chat = get_reward("reward_model", {"model": url, "max_retries": 0})
    server.faults = ["500"]  # one of the four chat requests fails: the whole batch is unscorable
    assert chat(RESPONSES, prompts=PROMPTS) == [None] * 4
    down = get_reward("reward_model", {"model": "http://127.0.0.1:9/classify", "max_retries": 0, "timeout": 2})
    assert down(["4"], prompts=["2+2?"]) == [None]


def test_vllm_reward_model_as_a_pairwise_judge(server, tiny_rm_dir):
    judge = RewardModelPairwiseJudge(make_reward_model(f"{server.base_url}/classify"))
    r_a, r_b = LocalRewardModel(str(tiny_rm_dir)).score([PROMPTS[1]] * 2, RESPONSES[1:3])
    verdict = judge.judge(PROMPTS[1], RESPONSES[1], RESPONSES[2])
    assert verdict.prob_a == pytest.approx(1 / (1 + math.exp(-(r_a - r_b))), abs=1e-5)
    assert judge.model == f"reward-model:{server.base_url}/classify"
    server.faults = ["400"]
    failed = RewardModelPairwiseJudge(make_reward_model(f"{server.base_url}/classify", max_retries=0))
    verdict = failed.judge(PROMPTS[1], RESPONSES[1], RESPONSES[2])
    assert verdict.prob_a is None and verdict.ab.source == "error" and "HTTP 400" in verdict.reason


def item(index, value, field="probs"):
    return {"index": index, field: value}


ANSWERS = [
    ({"data": [item(1, [0.5]), item(0, [-1.25])]}, "classify", [-1.25, 0.5]),  # ordered by index
    ({"data": [item(0, [2.0], "data"), item(1, [3], "data")]}, "pooling", [2.0, 3.0]),
    ({"data": [item(0, [[0.1], [0.2]], "data"), item(1, [[0.3]], "data")]}, "pooling", None),  # per token
    ({"data": [item(0, [0.1]), item(0, [0.2])]}, "classify", None),  # index twice
    ({"data": [item(0, [True]), item(1, [0.2])]}, "classify", None),
    ({"data": [item(0, ["NaN"]), item(1, [0.2])]}, "classify", None),
    ({"data": [item(0, []), item(1, [0.2])]}, "classify", None),
    ({"data": [item(0, [0.1], "data"), item(1, [0.2], "data")]}, "classify", None),  # a /pooling answer
    ({"error": {"message": "x", "code": 400}}, "classify", None),
    ([0.1, 0.2], "classify", None),
]


@pytest.mark.parametrize(("answer", "endpoint", "expected"), ANSWERS)
def test_vllm_answer_reading(answer, endpoint, expected):
    if expected is None:
        with pytest.raises(JudgeError):
            read_vllm_scores(answer, 2, endpoint)
    else:
        assert read_vllm_scores(answer, 2, endpoint) == expected


def test_cli_audits_a_reward_model_served_by_vllm(server, tmp_path, capsys):
    from rewardsmith.cli.main import main

    out = tmp_path / "run"
    url = f"{server.base_url}/classify"
    argv = ["audit", "run", "--reward-model", url, "--set", "math", "--n", "4", "--perturb", "authority",
            "--out", str(out), "--n-boot", "100", "--no-progress", "--max-retries", "0"]  # fmt: skip
    assert main(argv) == 0
    assert "judge tasks: 8 (8 judged, 0 reused)" in capsys.readouterr().out
    # 8 tasks x 2 responses, plus the one check request the audit sends before it starts (audit/preflight.py)
    assert server.paths == ["classify"] * 17 and all("messages" in body for body in server.bodies)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["run"]["judge"] == f"reward-model:{url}" and metrics["position"]["order_free"] is True
    assert metrics["accuracy"]["n"] == 4 and metrics["perturbations"]["authority"]["n_perturbed"] == 4
