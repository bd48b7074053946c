"""Group (listwise) judging: answers read by verdict table, groups formed by table, and the reward scored by a real
HTTP judge on 127.0.0.1 whose behaviour (quality rule, position bias, faults) is known — then inside TRL's
``GRPOTrainer`` with that judge and with the embedded llama.cpp judge.
"""

from __future__ import annotations

import json
import math

import pytest

from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.group import GroupJudge, combine_presentations, presentation_orders, read_group_answer
from rewardsmith.registry import get_reward
from rewardsmith.rewards.judge_group import assign_groups
from tests.support.fault_server import FaultServer
from tests.support.judge_prompts import quoted, quoted_candidates

ANSWERS = [
    # (judge text, n, expected scores by presented id or None, reason fragment)
    ('{"scores": {"1": 9, "2": 3}}', 2, [9.0, 3.0], ""),
    ('{"scores": [{"id": 2, "score": 1}, {"id": 1, "score": 10}]}', 2, [10.0, 1.0], ""),
    ('{"scores": [4, 6, 0]}', 3, [4.0, 6.0, 0.0], ""),
    ('Sure!\n```json\n{"scores": {"1": 7.5, "2": 2}}\n```\nHope this helps.', 2, [7.5, 2.0], ""),
    ('Here: {"scores": {"1": 5, "2": 5}} done', 2, [5.0, 5.0], ""),
    ('{"scores": {"1": 9}}', 2, None, "not exactly 1..2"),  # a candidate left out
    ('{"scores": {"1": 9, "1 ": 3}}', 2, None, "not exactly"),  # duplicate id
    ('{"scores": {"1": 9, "2": 11}}', 2, None, "outside 0..10"),
    ('{"scores": {"1": -1, "2": 3}}', 2, None, "outside 0..10"),
    ('{"scores": {"1": "high", "2": 3}}', 2, None, "invalid answer"),
    ('{"scores": [1, 2, 3]}', 2, None, "not exactly 1..2"),
    ('{"score": {"1": 9, "2": 3}}', 2, None, "scores"),
    ('{"scores": {"1": NaN, "2": 3}}', 2, None, "invalid answer"),
    ("Response 1 is better.", 2, None, "no JSON object"),
    ('{"scores": {"1": 9, "2": 3}', 2, None, "not JSON"),  # truncated
    ("", 2, None, "no JSON object"),
]


@pytest.mark.parametrize(("text", "n", "expected", "why"), ANSWERS)
def test_group_answer_verdicts(text, n, expected, why):
    scores, reason = read_group_answer(text, n, 10)
    assert scores == expected
    assert (reason == "") == (expected is not None)
    assert why in reason


GROUPINGS = [
    # (rows, group_by, num_generations, expected groups)
    ([{"prompt": "p"}] * 4, "auto", None, [[0, 1, 2, 3]]),
    ([{"prompt": "p"}, {"prompt": "q"}, {"prompt": "p"}, {"prompt": "q"}], "prompt", None, [[0, 2], [1, 3]]),
    # TRL's layout: the same prompt sampled twice in one batch is two adjacent groups of num_generations
    ([{"prompt": "p"}] * 4 + [{"prompt": "q"}] * 2, "num_generations", 2, [[0, 1], [2, 3], [4, 5]]),
    ([{"prompt": "p"}] * 4 + [{"prompt": "q"}] * 2, "auto", 2, [[0, 1], [2, 3], [4, 5]]),
    # a screened-out row shortens a group instead of shifting every later group
    ([{"prompt": "p"}] * 3 + [{"prompt": "q"}] * 4, "num_generations", 4, [[0, 1, 2], [3, 4, 5, 6]]),
    # a group_id column wins over the prompt under auto
    (
        [{"prompt": "p", "group_id": g} for g in ("a", "b", "a", "b")],
        "auto",
        4,
        [[0, 2], [1, 3]],
    ),
    # conversational prompts compare as messages
    (
        [{"prompt": [{"role": "user", "content": c}]} for c in ("x", "y", "x")],
        "prompt",
        None,
        [[0, 2], [1]],
    ),
]


@pytest.mark.parametrize(("rows", "group_by", "num_generations", "expected"), GROUPINGS)
def test_groups_from_layout_column_or_prompt(rows, group_by, num_generations, expected):
    assert assign_groups(rows, group_by, num_generations) == expected


def test_presentations_mirror_then_shuffle():
    orders = presentation_orders(4, 4, seed=7)
    assert orders[0] == [0, 1, 2, 3] and orders[1] == [3, 2, 1, 0]
    assert all(sorted(o) == [0, 1, 2, 3] for o in orders) and len({tuple(o) for o in orders}) == 4
    assert presentation_orders(4, 4, seed=7) == orders  # seeded: a rerun shows the same shuffles


class RuleJudgeServer(FaultServer):
    """A listwise judge with known behaviour: each candidate gets ``rule(text)``, plus ``bias`` at the first slot.

    Scripted faults (``push``) still come first, so the same server also answers garbage or fails on demand.
    """

    def __init__(self, rule, bias: int = 0):
        super().__init__()
        self.rule = rule
        self.bias = bias

    def _next(self, body):
        action = super()._next(body)
        if action != f"answer:{self.default_answer}":
            return action
        shown = candidates_in(body["messages"][-1]["content"])
        scores = {str(i + 1): min(10, self.rule(text) + (self.bias if i == 0 else 0)) for i, text in enumerate(shown)}
        return "answer:" + json.dumps({"scores": scores})


def candidates_in(content: str) -> list[str]:
    return quoted_candidates(content)


def prompt_in(content: str) -> str:
    return quoted(content, "prompt")


def correct_rule(text: str) -> int:
    return 9 if "4" in text else 2


def group_reward(server, **config):
    client = {"backend": "openai", "model": "rule-judge", "base_url": server.base_url, "max_retries": 0}
    return get_reward("llm_judge_group", {"client": client, **config})


def test_group_reward_one_request_per_presentation_with_all_candidates():
    with RuleJudgeServer(correct_rule) as server:
        reward = group_reward(server, num_generations=3, permutations=2)
        completions = ["It is 4.", "5", "22", "six", "4", "four"]
        prompts = ["What is 2 + 2?"] * 3 + ["What is 1 + 3?"] * 3
        results = reward.details(completions, prompts=prompts)
        assert [r.score for r in results] == [0.9, 0.2, 0.2, 0.2, 0.9, 0.2]
        assert len(server.requests) == 2 * 2  # 2 groups x 2 presentations
        for body in server.requests:
            content = body["messages"][-1]["content"]
            assert content.count("What is") == 1  # the prompt once
            assert len(candidates_in(content)) == 3
        shown = sorted(tuple(candidates_in(b["messages"][-1]["content"])) for b in server.requests)
        assert ("22", "5", "It is 4.") in shown and ("It is 4.", "5", "22") in shown  # as given, then mirrored
        schema = server.requests[0]["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["scores"]["required"] == ["1", "2", "3"]
        assert results[0].reason.startswith("group 0 (3): score 0.900 (presentations 0.90, 0.90)")
        assert results[0].group_disagreement == 0.0 and not results[0].top_changed


def test_permutations_cancel_a_first_slot_bias_and_report_it():
    # four equally wrong answers; the judge adds 6 points to whichever is shown first
    completions = ["5", "6", "7", "8"]
    with RuleJudgeServer(correct_rule, bias=6) as server:
        once = group_reward(server, permutations=1).details(completions, prompts=["2+2?"] * 4)
        twice = group_reward(server, permutations=2).details(completions, prompts=["2+2?"] * 4)
        four = group_reward(server, permutations=4).details(completions, prompts=["2+2?"] * 4)
    assert [r.score for r in once] == [0.8, 0.2, 0.2, 0.2]  # pure position: the first answer "wins"
    assert [r.score for r in twice] == [0.5, 0.2, 0.2, 0.5]  # mirrored: first and last share the bias
    assert twice[0].top_changed and twice[0].group_disagreement == pytest.approx((0.6 + 0 + 0 + 0.6) / 4)
    assert "disagree on the best candidate" in twice[0].reason
    spread = max(r.score for r in four) - min(r.score for r in four)
    assert spread < 0.8 - 0.2  # more presentations spread the bias thinner than one presentation


def test_invalid_presentation_abstains_alone_and_all_invalid_is_none():
    with RuleJudgeServer(correct_rule) as server:
        reward = group_reward(server, permutations=2, structured=False)
        server.push('answer:{"scores": {"1": 9}}')  # the first presentation leaves a candidate out
        partial = reward.details(["4", "5"], prompts=["2+2?"] * 2)
        assert [r.score for r in partial] == [0.9, 0.2]
        assert "1/2 presentations answered" in partial[0].reason
        assert "response_format" not in server.requests[0]

        server.push("answer:Response 1 is best.", "answer:I cannot decide.")
        none = reward.details(["4", "5"], prompts=["2+2?"] * 2)
        assert [r.score for r in none] == [None, None]
        assert "judge abstained" in none[0].reason and "no JSON object" in none[0].reason

        server.push("500", "500")
        failed = reward.details(["4", "5"], prompts=["2+2?"] * 2)
        assert [r.score for r in failed] == [None, None] and "judge failed" in failed[0].reason


def test_malformed_answer_rate_on_injected_faults():
    """Of the faults a hidden judge server produces, only answers that validate are used; the rest abstain."""
    faults = [
        'answer:{"scores": {"1": 9, "2": 3}}',
        'answer:```json\n{"scores": {"1": 9, "2": 3}}\n```',
        'answer:{"scores": {"1": 9, "2": 3}',
        'answer:{"scores": {"1": 9}}',
        'answer:{"scores": {"1": 90, "2": 3}}',
        "answer:Response 1.",
        'answer:{"scores": {"1": 9, "2": 3}}...',
        "malformed",
    ]
    with RuleJudgeServer(correct_rule) as server:
        judge = GroupJudge(make_client("openai", model="m", base_url=server.base_url, max_retries=0), permutations=1)
        verdicts = []
        for fault in faults:
            server.push(fault)
            verdicts.append(judge.judge("2+2?", ["4", "5"]))
    answered = [not v.abstained for v in verdicts]
    assert answered == [True, True, False, False, False, False, True, False]
    assert all(v.scores == [0.9, 0.3] for v, ok in zip(verdicts, answered, strict=True) if ok)


def test_combine_presentations_averages_by_candidate():
    from rewardsmith.judges.group import Presentation

    verdict = combine_presentations(
        2,
        [
            Presentation(order=[0, 1], scores=[1.0, 0.0]),
            Presentation(order=[1, 0], scores=[0.25, 0.75]),
            Presentation(order=[0, 1], reason="abstain"),
        ],
    )
    assert verdict.scores == [0.625, 0.375] and verdict.answered == 2
    assert verdict.disagreement == pytest.approx(0.75) and verdict.top_changed
    tie = combine_presentations(
        2, [Presentation(order=[0, 1], scores=[1.0, 0.0]), Presentation(order=[1, 0], scores=[0.5, 0.5])]
    )
    assert not tie.top_changed  # a tie still has the first presentation's best among its best


def length_rule(text: str) -> int:
    return len(text) % 11


@pytest.mark.slow
def test_group_reward_inside_grpo_trainer(tiny_model_dir, tmp_path):
    """Two prompts x four generations per step: one request per group and presentation, rewards as rescored."""
    from datasets import Dataset
    from trl import GRPOTrainer

    from tests.support.trl_helpers import tiny_grpo_config

    with RuleJudgeServer(length_rule) as server:
        reward = group_reward(server, num_generations=4, permutations=2)
        dataset = Dataset.from_dict({"prompt": ["What is 2 + 2?", "Say hello.", "Name a color.", "Count to 3."]})
        args = tiny_grpo_config(tmp_path, per_device_train_batch_size=8, num_generations=4, seed=0, disable_tqdm=True)
        trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=[reward], args=args, train_dataset=dataset)
        trainer.train()

        assert len(server.requests) == 2 * 2 * 2  # 2 steps x 2 groups x 2 presentations
        for body in server.requests:
            assert len(candidates_in(body["messages"][-1]["content"])) == 4
        logs = trainer._logs
        prompts, completions = list(logs["prompt"]), list(logs["completion"])
        assert len(completions) == 8 and prompts[:4] == [prompts[0]] * 4 and prompts[4:] == [prompts[4]] * 4
        asked = {(prompt_in(b["messages"][-1]["content"]), b["messages"][-1]["content"]) for b in server.requests}
        assert {p for p, _ in asked} >= {prompts[0], prompts[4]}
        rescored = group_reward(server, num_generations=4, permutations=2)(completions, prompts=prompts)
    logged = list(logs["rewards"]["llm_judge_group"])
    assert all(math.isclose(a, b, abs_tol=1e-6) for a, b in zip(logged, rescored, strict=True))
    assert len(set(rescored)) > 1


@pytest.mark.slow
@pytest.mark.llama
def test_group_reward_with_embedded_judge_inside_grpo_trainer(embedded_server, tiny_model_dir, tmp_path):
    """The embedded SmolLM2 on llama.cpp, held to the answer schema: every presentation of every group answers."""
    from datasets import Dataset
    from trl import GRPOTrainer

    from tests.support.trl_helpers import tiny_grpo_config

    client = {"backend": "embedded", "base_url": embedded_server.base_url, "concurrency": 4}
    reward = get_reward("llm_judge_group", {"client": client, "num_generations": 4, "permutations": 2})
    dataset = Dataset.from_dict({"prompt": ["What is 2 + 2?", "Say hello.", "What is 3 + 5?", "Name a color."]})
    args = tiny_grpo_config(tmp_path, per_device_train_batch_size=8, max_completion_length=8, disable_tqdm=True)
    trainer = GRPOTrainer(model=str(tiny_model_dir), reward_funcs=[reward], args=args, train_dataset=dataset)
    trainer.train()
    report = reward.client.report()
    assert report.requests + report.cache_hits == 2 * 2 * 2  # 2 steps x 2 groups x 2 presentations
    logged = list(trainer._logs["rewards"]["llm_judge_group"])
    assert len(logged) == 8 and not any(math.isnan(x) for x in logged)  # no group abstained
    assert all(0.0 <= x <= 1.0 for x in logged)


@pytest.mark.llama
def test_embedded_group_judge_answers_in_schema(embedded_server):
    judge = GroupJudge(
        make_client("openai", model=embedded_server.model, base_url=embedded_server.base_url), permutations=2
    )
    verdict = judge.judge("What is 2 + 2?", ["4", "5", "The answer is 4.", "22"])
    assert verdict.answered == 2, [p.reason for p in verdict.presentations]
    assert all(s is not None and 0.0 <= s <= 1.0 for s in verdict.scores)
    assert verdict.disagreement is not None


@pytest.mark.parametrize(("bias", "expected"), [(0, 0.0), (3, 0.3), (6, 0.6)])
def test_audit_listwise_position_metric_recovers_an_injected_bias(bias, expected):
    from rewardsmith.audit.listwise import listwise_position_metrics

    # the right answer sits in a middle slot, so the judge's 0..10 cap never clips the bias of the first slot
    groups = [[f"{c} apples", f"{c} pears", "4", f"{c}{c}"] for c in "abcdefghijkl"]
    with RuleJudgeServer(correct_rule, bias=bias) as server:
        client = make_client("openai", model="m", base_url=server.base_url, max_retries=0)
        judge = GroupJudge(client, permutations=2)
        verdicts = [judge.judge("What is 2 + 2?", group) for group in groups]
    metrics = listwise_position_metrics(verdicts, n_boot=300)
    assert metrics["n_groups"] == 12
    first_last = metrics["first_minus_last"]
    assert first_last["value"] == pytest.approx(expected, abs=1e-9)
    assert first_last["low"] - 1e-9 <= expected <= first_last["high"] + 1e-9
    first, last = metrics["slot_deviation"][0]["value"], metrics["slot_deviation"][-1]["value"]
    assert first == pytest.approx(expected / 2, abs=1e-9) and last == pytest.approx(-expected / 2, abs=1e-9)
    assert (metrics["disagreement"]["value"] > 0) == (bias > 0)
