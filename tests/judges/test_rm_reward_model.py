"""``reward_model``: a tiny sequence-classification reward model built offline, scored locally (batched, chat
template), through a real OpenRLHF-style ``/get_reward`` server on 127.0.0.1, inside TRL's ``GRPOTrainer``, and as
a pairwise judge through the bias audit.
"""

from __future__ import annotations

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rewardsmith.judges.base import PairwiseJudgeProtocol
from rewardsmith.judges.reward_model import (
    LocalRewardModel,
    RewardModelPairwiseJudge,
    read_rewards,
    verdict_from_rewards,
)
from rewardsmith.registry import get_reward
from rewardsmith.reward import ConfigError

pytest.importorskip("torch")
pytest.importorskip("transformers")


PROMPTS = ["What is 2 + 2?", "Name a color.", "Say hello politely to the new neighbour.", "Count to 3."]
RESPONSES = ["4", "Blue, like the sky on a clear day.", "Hello!", "1, 2, 3"]


def direct_scores(rm_dir, prompts, responses):
    """One unpadded forward pass per pair over the chat-templated text: the reference for batched scoring."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(rm_dir)
    model = AutoModelForSequenceClassification.from_pretrained(rm_dir).eval()
    out = []
    for prompt, response in zip(prompts, responses, strict=True):
        messages = [{"role": "user", "content": prompt}, {"role": "assistant", "content": response}]
        ids = tokenizer.apply_chat_template(messages, tokenize=False)
        batch = tokenizer(ids, return_tensors="pt", add_special_tokens=False)
        with torch.no_grad():
            out.append(float(model(**batch).logits[0, 0]))
    return out


def test_local_batched_scores_equal_one_by_one_chat_template_scores(tiny_rm_dir):
    expected = direct_scores(tiny_rm_dir, PROMPTS, RESPONSES)
    for batch_size in (1, 3, 8):
        scores = LocalRewardModel(str(tiny_rm_dir), batch_size=batch_size).score(PROMPTS, RESPONSES)
        assert scores == pytest.approx(expected, abs=1e-5)  # padding never changes a score
    texts = LocalRewardModel(str(tiny_rm_dir)).texts(PROMPTS[:1], RESPONSES[:1])
    assert "<|im_start|>user\nWhat is 2 + 2?" in texts[0] and "<|im_start|>assistant\n4" in texts[0]
    assert len(set(expected)) == len(expected)


def test_reward_model_reward_plain_and_conversational(tiny_rm_dir):
    reward = get_reward("reward_model", {"model": str(tiny_rm_dir), "batch_size": 2})
    expected = direct_scores(tiny_rm_dir, PROMPTS, RESPONSES)
    assert reward(RESPONSES, prompts=PROMPTS) == pytest.approx(expected, abs=1e-5)
    conversational = reward(
        [[{"role": "assistant", "content": r}] for r in RESPONSES],
        prompts=[[{"role": "user", "content": p}] for p in PROMPTS],
    )
    assert conversational == pytest.approx(expected, abs=1e-5)
    sigmoid = get_reward("reward_model", {"model": str(tiny_rm_dir), "transform": "sigmoid"})
    assert sigmoid(RESPONSES, prompts=PROMPTS) == pytest.approx([1 / (1 + math.exp(-x)) for x in expected], abs=1e-5)
    mixed = reward.details(["4", 7], prompts=PROMPTS[:2])
    assert mixed[0].score == pytest.approx(expected[0], abs=1e-5) and mixed[1].score is None


def test_bad_model_is_refused_or_unscorable(tmp_path, tiny_model_dir):
    with pytest.raises(ConfigError):
        get_reward("reward_model", {"model": str(tmp_path / "missing")})
    # a directory that is not a one-output classifier: every sample unscorable with the reason, nothing raised
    reward = get_reward("reward_model", {"model": str(tiny_model_dir)})
    results = reward.details(["4"], prompts=["2+2?"])
    assert results[0].score is None and "reward model" in results[0].reason


class RewardServer:
    """An OpenRLHF-style reward server on 127.0.0.1 (``POST /get_reward``) backed by the tiny reward model: it scores
    each ``query`` (prompt + response text) with the model, the way OpenRLHF's ``serve_rm`` does. ``faults`` are
    answered first: ``"500"``, ``"short"`` (one reward too few), ``"nan"``."""

    def __init__(self, rm_dir):
        self.model = LocalRewardModel(str(rm_dir), use_chat_template=False)
        self.bodies: list[dict] = []
        self.faults: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.bodies.append(body)
                fault = server.faults.pop(0) if server.faults else None
                if fault == "500":
                    self.send_response(500)
                    self.end_headers()
                    return
                rewards = server.model.score([""] * len(body["query"]), body["query"])
                if fault == "short":
                    rewards = rewards[:-1]
                payload = json.dumps({"rewards": rewards if fault != "nan" else ["NaN"] * len(rewards)}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/get_reward"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_remote_openrlhf_protocol(tiny_rm_dir):
    server = RewardServer(tiny_rm_dir)
    try:
        reward = get_reward("reward_model", {"model": server.url, "label_column": "solution", "max_retries": 1})
        scores = reward(RESPONSES, prompts=PROMPTS, solution=["4", "blue", "hello", "3"])
        body = server.bodies[-1]
        assert body["query"] == [p + r for p, r in zip(PROMPTS, RESPONSES, strict=True)]
        assert body["prompts"] == PROMPTS and body["labels"] == ["4", "blue", "hello", "3"]
        local = LocalRewardModel(str(tiny_rm_dir), use_chat_template=False).score([""] * 4, body["query"])
        assert scores == pytest.approx(local, abs=1e-5)

        server.faults = ["500"]  # retried, then answered
        assert reward(RESPONSES, prompts=PROMPTS) == pytest.approx(scores, abs=1e-5)
        server.faults = ["short"]
        short = reward.details(RESPONSES, prompts=PROMPTS)
        assert all(r.score is None and "expected 4 rewards" in r.reason for r in short)
        server.faults = ["nan"]
        assert reward(RESPONSES, prompts=PROMPTS) == [None] * 4
    finally:
        server.close()
    down = get_reward("reward_model", {"model": server.url, "max_retries": 0, "timeout": 2})
    assert down(["4"], prompts=["2+2?"]) == [None]


def test_remote_reward_model_is_cached_and_accounted_like_a_judge_client(tiny_rm_dir, tmp_path):
    server = RewardServer(tiny_rm_dir)
    try:
        config = {"model": server.url, "label_column": "solution", "max_retries": 1, "cache_dir": str(tmp_path)}
        first = get_reward("reward_model", config)
        scores = first(RESPONSES, prompts=PROMPTS, solution=["4", "blue", "hello", "3"])
        assert len(server.bodies) == 1 and first.client.report().requests == 1
        rerun = get_reward("reward_model", config)  # a new run over the same cache: nothing reaches the server
        assert rerun(RESPONSES, prompts=PROMPTS, solution=["4", "blue", "hello", "3"]) == scores
        assert len(server.bodies) == 1 and rerun.client.report().cache_hits == 4
        changed = rerun(RESPONSES[:2], prompts=PROMPTS[:2], solution=["4", "red"])  # a new label is a new request
        assert len(server.bodies) == 2 and server.bodies[-1]["query"] == [PROMPTS[1] + RESPONSES[1]]
        assert changed[0] == scores[0]
    finally:
        server.close()


ANSWERS = [
    ({"rewards": [1.5, -2]}, 2, [1.5, -2.0]),
    ({"scores": [0.1, 0.2]}, 2, [0.1, 0.2]),
    ({"rewards": [[0.5], [0.25]]}, 2, [0.5, 0.25]),
    ({"rewards": [1.0]}, 2, None),
    ({"rewards": [1.0, True]}, 2, None),
    ({"rewards": [1.0, "2"]}, 2, None),
    ({"reward": [1.0, 2.0]}, 2, None),
    ([1.0, 2.0], 2, None),
]


@pytest.mark.parametrize(("answer", "n", "expected"), ANSWERS)
def test_reward_server_answer_verdicts(answer, n, expected):
    from rewardsmith.judges.base import JudgeError

    if expected is None:
        with pytest.raises(JudgeError):
            read_rewards(answer, n)
    else:
        assert read_rewards(answer, n) == expected


def test_bradley_terry_pairwise_verdicts():
    assert verdict_from_rewards(1.0, 1.0).prob_a == 0.5 and verdict_from_rewards(1.0, 1.0).winner == "tie"
    v = verdict_from_rewards(2.0, 0.0)
    assert v.prob_a == pytest.approx(1 / (1 + math.exp(-2))) and v.winner == "a" and not v.flipped
    assert v.ab.prob_first == pytest.approx(1 - v.ba.prob_first)  # the same verdict in both orders
    assert verdict_from_rewards(-1000.0, 1000.0).prob_a == 0.0


def test_reward_model_is_audited_as_a_pairwise_judge(tiny_rm_dir, tmp_path):
    from rewardsmith.audit.generators import generate_set
    from rewardsmith.audit.metrics import compute_metrics
    from rewardsmith.audit.runner import AuditRunner, load_verdicts

    judge = RewardModelPairwiseJudge(LocalRewardModel(str(tiny_rm_dir), batch_size=2))
    assert isinstance(judge, PairwiseJudgeProtocol)
    items = generate_set("mixed", 12, seed=0)
    summary = AuditRunner(judge, items, tmp_path / "audit", perturbations=["verbosity"], progress=False).run()
    assert (summary.total, summary.failed) == (24, 0)
    verdicts = load_verdicts(tmp_path / "audit")
    assert all(v.prob_a is not None and not v.flipped for v in verdicts.values())
    metrics = compute_metrics(items, verdicts, n_boot=200)
    position = metrics["position"]
    assert position["position_bias"]["value"] == 0.0 and position["consistency"]["value"] == 1.0  # no order at all
    assert metrics["accuracy"]["n"] == 12


@pytest.mark.slow
def test_reward_model_inside_grpo_trainer(tiny_model_dir, tiny_rm_dir, tmp_path):
    """TRL logs the reward model's scores under its name; rescoring the logged completions gives them back."""
    from datasets import Dataset
    from trl import GRPOTrainer

    from tests.support.trl_helpers import tiny_grpo_config

    reward = get_reward("reward_model", {"model": str(tiny_rm_dir), "batch_size": 4})
    dataset = Dataset.from_dict({"prompt": [[{"role": "user", "content": p}] for p in PROMPTS]})
    args = tiny_grpo_config(tmp_path, seed=0, disable_tqdm=True)
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=[reward], args=args, train_dataset=dataset)
    trainer.train()
    logs = trainer._logs
    logged = list(logs["rewards"]["reward_model"])
    rescored = reward(list(logs["completion"]), prompts=list(logs["prompt"]))
    assert len(logged) == 4 and logged == pytest.approx(rescored, abs=1e-4)
    assert len(set(rescored)) > 1
    assert len([e for e in trainer.state.log_history if "rewards/reward_model/mean" in e]) == 2
