"""Rubrics of weighted criteria: aggregation and answer reading by verdict table, rubric files, and the
``llm_rubric`` reward judged by a real HTTP server on 127.0.0.1 with known behaviour (and by the embedded judge).
"""

from __future__ import annotations

import json
import re

import pytest

from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.criteria import CriteriaJudge, Criterion, Rubric, aggregate, load_rubric, read_criteria_answer
from rewardsmith.registry import get_reward
from rewardsmith.reward import ConfigError
from tests.support.fault_server import FaultServer
from tests.support.judge_prompts import quoted

RUBRIC = Rubric(
    criteria=(
        Criterion(id="correct", description="The final answer is 4.", weight=2, required=True),
        Criterion(id="polite", description="The response is polite.", weight=1),
        Criterion(id="short", description="The response has at most five words.", weight=1),
    )
)

AGGREGATIONS = [
    # (values, aggregation, expected score, reason fragment)
    ({"correct": 1, "polite": 1, "short": 0}, "weighted_mean", 0.75, "weighted_mean 0.750"),
    ({"correct": 1, "polite": 0, "short": 0}, "weighted_mean", 0.5, "correct=pass (w2, required)"),
    ({"correct": 1, "polite": None, "short": 0}, "weighted_mean", 2 / 3, "polite=abstain"),  # abstain left out
    ({"correct": 0, "polite": 1, "short": 1}, "weighted_mean", 0.0, "required criterion failed (correct)"),
    ({"correct": None, "polite": 1, "short": 1}, "weighted_mean", None, "required criterion abstained (correct)"),
    ({"correct": 0, "polite": None, "short": None}, "min", 0.0, "required criterion failed"),  # fail beats unknown
    ({"correct": 1, "polite": 1, "short": 0}, "min", 0.0, "min 0.000"),
    ({"correct": 1, "polite": 1, "short": 1}, "min", 1.0, "short=pass (w1)"),
    ({"correct": 1, "polite": 0.5, "short": 0.75}, "min", 0.5, "polite=0.50"),
    ({"correct": 1, "polite": 0, "short": 0}, "all_required", 1.0, "all_required 1.000"),
    ({"correct": 0.4, "polite": 1, "short": 1}, "all_required", 0.0, "required criterion failed"),  # below 0.5
    ({"correct": None, "polite": 0, "short": 0}, "all_required", None, "abstained"),
]


@pytest.mark.parametrize(("values", "how", "expected", "fragment"), AGGREGATIONS)
def test_aggregation_verdicts(values, how, expected, fragment):
    scored = aggregate(RUBRIC, {k: None if v is None else float(v) for k, v in values.items()}, how)
    assert scored.score == (None if expected is None else pytest.approx(expected))
    assert fragment in scored.reason
    assert all(f"{c.id}=" in scored.reason for c in RUBRIC.criteria)  # the reason lists every criterion


def test_no_answered_criterion_is_unscorable():
    optional = Rubric(criteria=(Criterion(id="a", description="x"), Criterion(id="b", description="y")))
    assert aggregate(optional, {"a": None, "b": None}, "weighted_mean").score is None


READINGS = [
    # (judge text, scale, expected values by criterion id)
    ('{"criteria": {"correct": {"met": true}, "polite": {"met": false}, "short": {"met": true}}}', None, [1, 0, 1]),
    ('{"correct": {"met": true}, "polite": {"met": "no"}, "short": "yes"}', None, [1, 0, 1]),  # top level, words
    ('```json\n{"criteria": {"correct": true, "polite": false, "short": false}}\n```', None, [1, 0, 0]),
    ('{"criteria": {"correct": {"met": true}, "polite": {"met": "maybe"}}}', None, [1, None, None]),  # per criterion
    ('{"criteria": {"correct": {"met": true}, "polite": {"reason": "ok"}, "short": 3}}', None, [1, None, None]),
    ('{"criteria": {"correct": {"score": 4}, "polite": {"score": 2}, "short": 9}}', 4, [1, 0.5, None]),  # 9 > 4
    ('{"criteria": {"correct": {"score": 3}, "polite": {"met": true}, "short": {"score": -1}}}', 4, [0.75, None, None]),
    ("All criteria are met.", None, [None, None, None]),
    ('{"criteria": {"correct": {"met": true}', None, [None, None, None]),  # cut off
    ('{"criteria": ["correct", "polite"]}', None, [None, None, None]),
]


@pytest.mark.parametrize(("text", "scale", "expected"), READINGS)
def test_answer_reading_abstains_per_criterion(text, scale, expected):
    verdicts = read_criteria_answer(text, RUBRIC, scale)
    assert [v.id for v in verdicts] == ["correct", "polite", "short"]
    assert [v.value for v in verdicts] == [None if e is None else pytest.approx(e) for e in expected]
    assert all(v.reason for v in verdicts if v.abstained)


def test_rubric_file_and_config_errors(tmp_path):
    path = tmp_path / "math-answer.yaml"
    path.write_text(
        "criteria:\n"
        "  - {id: correct, description: 'The final answer is 4.', weight: 2, required: true}\n"
        "  - {id: polite, description: 'The response is polite.'}\n",
        encoding="utf-8",
    )
    rubric = load_rubric(path)
    assert rubric.name == "math-answer" and [c.id for c in rubric.criteria] == ["correct", "polite"]
    assert rubric.criteria[0].required and rubric.criteria[1].weight == 1.0

    client = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    bad = [
        {"client": client},  # no criteria
        {"client": client, "criteria_file": str(path), "criteria": [{"id": "a", "description": "x"}]},
        {"client": client, "criteria": [{"id": "a", "description": "x"}, {"id": "a", "description": "y"}]},
        {"client": client, "criteria": [{"id": "a b", "description": "x"}]},
        {"client": client, "criteria": [{"id": "a", "description": "x", "weight": 0}]},
        {"client": client, "criteria": [{"id": "a", "description": "x"}], "aggregation": "all_required"},
        {"client": client, "criteria_file": str(tmp_path / "missing.yaml")},
    ]
    for config in bad:
        with pytest.raises(ConfigError):
            get_reward("llm_rubric", config)


class CriteriaRuleServer(FaultServer):
    """Answers each criterion by a known rule on the response: correct = contains "4", polite = contains "please",
    short = at most five words. Scripted faults (``push``) come first."""

    def _next(self, body):
        action = super()._next(body)
        if action != f"answer:{self.default_answer}":
            return action
        content = body["messages"][-1]["content"]
        response = quoted(content, "response")
        asked = re.findall(r"^- ([A-Za-z0-9_.-]+): ", content, flags=re.MULTILINE)
        rules = {
            "correct": "4" in response,
            "polite": "please" in response.lower(),
            "short": len(response.split()) <= 5,
        }
        return "answer:" + json.dumps({"criteria": {c: {"met": rules[c]} for c in asked}})


def rubric_reward(server, **config):
    client = {"backend": "openai", "model": "rule-judge", "base_url": server.base_url, "max_retries": 0}
    criteria = [c.model_dump() for c in RUBRIC.criteria]
    return get_reward("llm_rubric", {"client": client, "criteria": criteria, **config})


SAMPLES = [
    # (completion, weighted_mean, min, all_required)
    ("4, please.", 1.0, 1.0, 1.0),
    ("It is 4.", 0.75, 0.0, 1.0),
    ("Please note that the answer to this question is 4.", 0.75, 0.0, 1.0),
    ("5, please.", 0.0, 0.0, 0.0),
]


@pytest.mark.parametrize("how", ["weighted_mean", "min", "all_required"])
def test_rubric_reward_against_rule_judge(how):
    column = {"weighted_mean": 1, "min": 2, "all_required": 3}[how]
    with CriteriaRuleServer() as server:
        reward = rubric_reward(server, aggregation=how)
        results = reward.details([s[0] for s in SAMPLES], prompts=["What is 2 + 2?"] * len(SAMPLES))
        assert len(server.requests) == len(SAMPLES)  # one request holds every criterion
        schema = server.requests[0]["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["criteria"]["required"] == ["correct", "polite", "short"]
    assert [r.score for r in results] == [s[column] for s in SAMPLES]
    assert results[1].criteria == {"correct": 1.0, "polite": 0.0, "short": 1.0}
    assert "correct=pass (w2, required); polite=fail (w1); short=pass (w1)" in results[1].reason


def test_per_criterion_requests_and_faults_abstain_alone():
    with CriteriaRuleServer() as server:
        reward = rubric_reward(server, per_criterion=True, structured=False)
        server.push("answer:I think so.")  # the first criterion's answer is unreadable; the others answer
        [result] = reward.details(["It is 4."], prompts=["What is 2 + 2?"])
        assert len(server.requests) == 3 and all("response_format" not in b for b in server.requests)
        asked = [re.findall(r"^- (\w+):", b["messages"][-1]["content"], flags=re.M) for b in server.requests]
        assert sorted(a[0] for a in asked) == ["correct", "polite", "short"] and all(len(a) == 1 for a in asked)
    # requests run concurrently, so which criterion got the garbage is the one that abstained
    abstained = [c for c, v in result.criteria.items() if v is None]
    assert len(abstained) == 1
    if abstained == ["correct"]:
        assert result.score is None and "required criterion abstained" in result.reason
    else:
        assert result.score is not None and f"{abstained[0]}=abstain" in result.reason


def test_parse_failure_rate_on_injected_faults():
    """Each injected fault costs only the criteria it touches; valid answers are all used."""
    faults = [
        '{"criteria": {"correct": {"met": true}, "polite": {"met": false}, "short": {"met": true}}}',
        '{"criteria": {"correct": {"met": true}, "polite": {"met": "perhaps"}, "short": {"met": true}}}',
        '{"criteria": {"correct": {"met": true}, "short": {"met": true}}}',
        '{"criteria": {"correct": {"met": true}, "polite": {"met": false}, "short": {"met": true}',
        "Correct: yes. Polite: no. Short: yes.",
        '{"criteria": {"correct": {"met": 1}, "polite": {"met": null}, "short": {"met": true}}}',
        '{"criteria": {"correct": {"met": true}, "polite": {"met": false}, "short": {"met": true}}}...',
        "malformed",
    ]
    with CriteriaRuleServer() as server:
        client = make_client("openai", model="m", base_url=server.base_url, max_retries=0)
        judge = CriteriaJudge(client, RUBRIC)
        scored = []
        for fault in faults:
            server.push(fault if fault == "malformed" else f"answer:{fault}")
            scored.append(judge.judge("What is 2 + 2?", "It is 4."))
    failures = [s.parse_failures for s in scored]
    assert failures == [0, 1, 1, 3, 3, 1, 0, 3]
    rate = sum(failures) / (3 * len(faults))
    assert rate == pytest.approx(12 / 24)
    assert [s.score for s in scored[:3]] == [0.75, pytest.approx(1.0), pytest.approx(1.0)]


@pytest.mark.llama
def test_embedded_judge_answers_every_criterion_in_schema(embedded_server):
    client = make_client("openai", model=embedded_server.model, base_url=embedded_server.base_url)
    judge = CriteriaJudge(client, RUBRIC)
    scored = [judge.judge("What is 2 + 2?", text) for text in ("4, please.", "5")]
    assert all(s.parse_failures == 0 for s in scored), [s.reason for s in scored]
    assert all(s.score is not None and 0.0 <= s.score <= 1.0 for s in scored)
