"""verl adapter: ``compute_score`` called the way verl's reward managers call it, without verl installed.

:func:`naive_manager_loop` reproduces what verl's ``NaiveRewardManager`` does with the function: keyword call,
``extra_info`` extended with ``num_turns``/``rollout_reward_scores``, reward from ``score["score"]`` (or the float),
every other key appended to ``reward_extra_info`` lists that must stay aligned, and validation metrics averaged per key
with numpy. verl 0.9.1 itself runs these paths in tests/trainers/test_verl_reward_loop.py (its own virtual environment).
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

import rewardsmith
from rewardsmith.adapters.trainers.verl import VerlScorer, compute_score, load_mapping
from rewardsmith.reward import ConfigError

needs_math = pytest.mark.skipif("math_equivalence" not in rewardsmith.list_rewards(), reason="math family absent")


def naive_manager_loop(fn, samples, **reward_kwargs):
    rewards, extra = [], defaultdict(list)
    for s in samples:
        extra_info = dict(s.get("extra_info") or {})
        extra_info.update(num_turns=None, rollout_reward_scores={})
        score = fn(
            data_source=s["data_source"],
            solution_str=s["response"],
            ground_truth=s["ground_truth"],
            extra_info=extra_info,
            **reward_kwargs,
        )
        if isinstance(score, dict):
            rewards.append(score["score"])
            for key, value in score.items():
                extra[key].append(value)
        else:
            rewards.append(score)
    assert all(len(v) == len(samples) for v in extra.values()), "reward_extra_info lists misaligned"
    metrics = {k: float(np.mean(np.array(v))) for k, v in extra.items() if k != "reason"}
    return np.array(rewards, dtype=np.float32), metrics


# (data_source, response, ground_truth, expected score, expected unscorable)
MATH_TABLE = [
    ("openai/gsm8k", "Natalia sold 48 + 24 clips. #### 72", "72", 1.0, False),
    ("openai/gsm8k", "So the answer is \\boxed{71}.", "72", 0.0, False),
    ("lighteval/MATH", "<think>half</think> \\boxed{\\dfrac12}", "\\frac{1}{2}", 1.0, False),
    ("DigitalLearningGmbH/MATH-lighteval", "\\boxed{2^{3}}", "8", 1.0, False),
    ("aime24", "\\boxed{8}", "2^{3}", 1.0, False),
    ("openai/gsm8k", "The answer is 72", None, 0.0, True),  # no gold: unscorable, not wrong
    ("my_private_set", "\\boxed{72}", "72", 0.0, True),  # no route
]


@needs_math
@pytest.mark.parametrize(("source", "response", "gold", "score", "unscorable"), MATH_TABLE)
def test_default_routes_verdict_table(source, response, gold, score, unscorable):
    result = compute_score(data_source=source, solution_str=response, ground_truth=gold, extra_info={"index": 0})
    assert result == {"score": score, "unscorable": unscorable}


@needs_math
def test_naive_manager_contract_keys_stay_aligned():
    samples = [
        {"data_source": s, "response": r, "ground_truth": g, "extra_info": {"index": i}}
        for i, (s, r, g, *_) in enumerate(MATH_TABLE)
    ]
    rewards, metrics = naive_manager_loop(compute_score, samples)
    assert rewards.tolist() == [row[3] for row in MATH_TABLE]
    assert metrics["unscorable"] == pytest.approx(2 / len(MATH_TABLE))


def test_custom_mapping_through_reward_kwargs(tmp_path):
    mapping = {
        "routes": [
            {"match": ["digits*"], "reward": "character_share", "config": {"characters": "0123456789"}},
            {"match": ["fmt"], "reward": "think_format"},
        ],
        "unscorable_score": -1.0,
        "include_reason": True,
    }
    import rewardsmith.adapters.demo.tasks  # noqa: F401  (registers character_share)

    path = tmp_path / "verl_rewards.yaml"
    path.write_text(json.dumps(mapping))  # JSON is YAML
    for kw in ({"mapping": mapping}, {"mapping": str(path)}):
        samples = [
            {"data_source": "digits-v1", "response": "12ab", "ground_truth": ""},
            {"data_source": "DIGITS", "response": "1234", "ground_truth": ""},
            {"data_source": "other", "response": "1234", "ground_truth": ""},
        ]
        rewards, _ = naive_manager_loop(compute_score, samples, **kw)
        assert rewards.tolist() == [0.5, 1.0, -1.0]
        third = compute_score(data_source="other", solution_str="x", ground_truth="", **kw)
        assert third["unscorable"] is True and "no rewardsmith route" in third["reason"]


def test_missing_reward_and_non_text_are_unscorable_never_raise():
    scorer = VerlScorer({"routes": [{"match": ["*"], "reward": "no_such_reward"}], "include_reason": True})
    result = scorer(data_source="x", solution_str="y", ground_truth="z")
    assert result["score"] == 0.0 and result["unscorable"] and "no_such_reward" in result["reason"]
    scorer = VerlScorer({"routes": [{"match": ["*"], "reward": "think_format"}]})
    assert scorer(data_source="x", solution_str=None, ground_truth="z") == {"score": 0.0, "unscorable": True}


def test_code_sources_get_parsed_tests():
    _, route = VerlScorer().route_for("codecontests")
    assert route.reward == "code_tests" and route.parse_json and route.ground_truth_column == "tests"
    from rewardsmith.adapters.trainers.verl import _row

    row = _row(route, "codecontests", json.dumps({"inputs": ["1\n"], "outputs": ["2\n"]}), {"index": 3})
    assert row == {"index": 3, "tests": {"inputs": ["1\n"], "outputs": ["2\n"]}, "data_source": "codecontests"}


@pytest.mark.skipif("code_tests" not in rewardsmith.list_rewards(), reason="code family absent")
@pytest.mark.slow
def test_code_datasets_run_their_tests_in_the_sandbox():
    tests = json.dumps({"inputs": ["1\n", "5\n"], "outputs": ["2\n", "6\n"]})  # verl/PRIME code ground truth
    samples = [
        {"data_source": "codecontests", "response": "```python\nprint(int(input()) + 1)\n```", "ground_truth": tests},
        {"data_source": "apps", "response": "```python\nprint(int(input()))\n```", "ground_truth": tests},
        {"data_source": "taco", "response": "I cannot solve this.", "ground_truth": tests},
        {"data_source": "codecontests", "response": "```python\nprint(2)\n```", "ground_truth": "not json"},
    ]
    rewards, metrics = naive_manager_loop(compute_score, samples)
    assert rewards.tolist() == [1.0, 0.0, 0.0, 0.0]
    assert metrics["unscorable"] == pytest.approx(0.25)  # unparseable tests: flagged, not silently wrong


def test_invalid_mapping_fails_clearly(tmp_path):
    with pytest.raises(ConfigError, match="verl reward mapping"):
        load_mapping({"routes": [{"match": [], "reward": "x"}]})
    with pytest.raises(ConfigError, match="verl reward mapping"):
        load_mapping({"rutes": []})
    with pytest.raises(FileNotFoundError):
        load_mapping(tmp_path / "missing.yaml")


def test_routes_are_tried_in_order_and_an_unrouted_reason_names_the_patterns():
    """The mapping's routes are the `route` reward in glob mode: first match wins, case ignored, and a data source
    no route takes says which patterns it missed."""
    mapping = {
        "routes": [
            {"match": ["fmt*"], "reward": "think_format"},
            {"match": ["fmt-tags", "tags*"], "reward": "tag_count"},
        ],
        "include_reason": True,
    }
    scorer = VerlScorer(mapping)
    assert scorer.router.config.mode == "glob" and scorer.router.config.ignore_case
    text = "<think>a</think>b"
    # "fmt-tags" matches both routes: the first one (think_format) scores it
    results = [compute_score(source, text, None, mapping=mapping) for source in ("fmt-tags", "TAGS-v2", "other")]
    assert [r["score"] for r in results] == [1.0, 0.5, 0.0]
    assert results[2]["unscorable"] and results[2]["reason"] == (
        "no rewardsmith route for data_source 'other' (matches none of ['fmt*', 'fmt-tags', 'tags*'])"
    )
    assert [scorer.route_for(s)[0] for s in ("fmt-tags", "TAGS-v2")] == [0, 1]
    assert scorer.route_for("other") is None


def test_a_route_is_built_on_first_use_and_once():
    """A route whose data never comes is never built (the default code route needs a sandbox a math run may lack)."""
    scorer = VerlScorer({"routes": [{"match": ["fmt"], "reward": "think_format"}, {"match": ["x"], "reward": "nope"}]})
    fmt, missing = scorer.router.targets
    assert fmt.built is None and missing.built is None
    assert scorer(data_source="fmt", solution_str="<think>a</think>b", ground_truth="")["score"] == 1.0
    built = fmt.built
    assert built is not None and missing.built is None
    scorer(data_source="fmt", solution_str="x", ground_truth="")
    assert fmt.built is built
