"""Verdict tables for the format family: think_format, tag_count, regex_match, json_schema."""

from __future__ import annotations

import pickle
import time

import pytest
from pydantic import BaseModel

from rewardsmith import ConfigError, get_reward
from rewardsmith.rewards.format import extract_json_text, fenced_blocks, mask_code

FENCE = "```"

# (config, completion, expected score)
THINK_FORMAT_TABLE = [
    ({}, "<think>2+2=4</think> 4", 1.0),
    ({}, "<think>\n2+2=4\n</think>\nThe answer is 4.", 1.0),
    ({}, "  \n<think>x</think> 4  ", 1.0),
    ({}, "4", 0.0),
    ({}, "", 0.0),
    ({}, "<think>unclosed reasoning 4", 0.0),
    ({}, "reasoning</think> 4", 0.0),
    ({}, "</think> 4 <think>", 0.0),
    ({}, "<think>x</think>", 0.0),  # no answer
    ({}, "<think>x</think>   \n\t ", 0.0),  # blank answer
    ({}, "<think>a<think>b</think></think> 4", 0.0),  # nested
    ({}, "<think>a</think><think>b</think> 4", 0.0),  # two blocks
    ({}, "<think>a</think> 4 <think>", 0.0),  # stray tag in the answer
    ({}, "Sure! <think>a</think> 4", 0.0),  # text before
    ({"allow_text_before": True}, "Sure! <think>a</think> 4", 1.0),
    ({}, "<think></think> 4", 1.0),  # empty think allowed by default
    ({"allow_empty_think": False}, "<think> \n </think> 4", 0.0),
    ({"allow_empty_think": False}, "<think>ok</think> 4", 1.0),
    ({}, "<THINK>x</THINK> 4", 0.0),  # tags are case-sensitive
    # tags inside code are text, not structure
    ({}, f"<think>x</think>\n{FENCE}html\n<think>y</think>\n{FENCE}\n", 1.0),
    ({}, f"{FENCE}\n<think>x</think> 4\n{FENCE}", 0.0),
    ({}, "<think>the tag `</think>` closes</think> it is `<think>`", 1.0),
    ({"ignore_code": False}, "<think>the tag `</think>` closes</think> it is `<think>`", 0.0),
    ({}, f"<think>x\n{FENCE}\nunclosed fence</think> 4", 0.0),  # the unclosed fence swallows </think>
    # answer-tag mode
    ({"answer_tag": "answer"}, "<think>x</think><answer>4</answer>", 1.0),
    ({"answer_tag": "answer"}, "<think>\nx\n</think>\n<answer>\n4\n</answer>\n", 1.0),
    ({"answer_tag": "answer"}, "<think>x</think> 4", 0.0),
    ({"answer_tag": "answer"}, "<think>x</think><answer> </answer>", 0.0),
    ({"answer_tag": "answer"}, "<think>x</think>so <answer>4</answer>", 0.0),
    ({"answer_tag": "answer"}, "<think>x</think><answer>4</answer> and more", 0.0),
    ({"answer_tag": "answer"}, "<think>x</think><answer>4</answer><answer>5</answer>", 0.0),
    ({"answer_tag": "answer"}, "<think><answer>4</answer></think><answer>4</answer>", 0.0),
    # prompt already opened the reasoning block
    ({"think_opened_in_prompt": True}, "2+2=4</think> 4", 1.0),
    ({"think_opened_in_prompt": True}, "<think>2+2=4</think> 4", 0.0),
    # other tag names
    ({"think_tag": "reasoning"}, "<reasoning>x</reasoning> 4", 1.0),
    ({"think_tag": "reasoning"}, "<think>x</think> 4", 0.0),
]


@pytest.mark.parametrize(("config", "completion", "expected"), THINK_FORMAT_TABLE)
def test_think_format_verdicts(config, completion, expected):
    [result] = get_reward("think_format", config).details([completion])
    assert result.score == expected, result.reason
    assert result.reason


def test_think_format_reasons_name_the_problem():
    reward = get_reward("think_format")
    reasons = [r.reason for r in reward.details(["4", "<think>a</think><think>b</think> 4", "<think>x</think>"])]
    assert reasons == ["found 0 </think>, expected 1", "found 2 </think>, expected 1", "no answer after </think>"]


@pytest.mark.parametrize(
    "completion",
    [
        "<think>" * 200_000,
        "<think>" + "a" * 2_000_000 + "</think>" + " b" * 500_000,
        "`" * 1_000_000,
        ("```\n" * 100_000) + "<think>x</think> 4",
        "<" * 1_000_000 + "/think>",
        "<think>`" + "x`" * 300_000 + "</think> y",
        # open-r1's format regex (lazy .*? twice) needs ~13 s on 8k repeats of this; quadratic
        "<think>\nx" + "\n</think>\n<answer>\n" * 50_000 + "tail",
    ],
    ids=["many-opens", "huge-block", "backticks", "many-fences", "many-lt", "many-inline", "lazy-regex-trap"],
)
@pytest.mark.parametrize("config", [{}, {"answer_tag": "answer"}], ids=["plain", "answer-tag"])
def test_think_format_is_linear_on_huge_input(completion, config):
    reward = get_reward("think_format", config)
    start = time.perf_counter()
    [score] = reward([completion])
    assert score in (0.0, 1.0)
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("bad", [{"think_tag": "th ink"}, {"think_tag": ""}, {"answer_tag": "<a>"}, {"tags": 1}])
def test_think_format_bad_config(bad):
    with pytest.raises(ConfigError, match="think_format"):
        get_reward("think_format", bad)


def test_code_masking_keeps_offsets():
    text = f"a `b` c\n{FENCE}py\nx = '<think>'\n{FENCE}\nd"
    masked = mask_code(text)
    assert len(masked) == len(text)
    assert "<think>" not in masked and "`" not in masked
    assert masked.startswith("a ") and masked.endswith("\nd")
    assert fenced_blocks(text) == [(8, len(text) - 2, "py", "x = '<think>'\n")]


TAG_COUNT_TABLE = [
    ({}, "<think>x</think><answer>4</answer>", 1.0),
    ({}, "<think>\nx\n</think>\n<answer>\n4\n</answer>", 1.0),
    ({}, "<think>x</think> 4", 0.5),
    ({}, "<answer>4</answer>", 0.5),
    ({}, "<think><think>x</think><answer>4</answer>", 0.75),
    ({}, "<think><think></think></think>", 0.0),
    ({}, "", 0.0),
    ({}, f"{FENCE}\n<think>x</think><answer>4</answer>\n{FENCE}", 0.0),
    ({"ignore_code": False}, f"{FENCE}\n<think>x</think><answer>4</answer>\n{FENCE}", 1.0),
    ({"tags": ["<think>\n", "\n</think>\n"]}, "<think>\nx\n</think>\n4", 1.0),
    ({"tags": ["<think>\n", "\n</think>\n"]}, "<think>x</think>4", 0.0),
    ({"tags": ["<a>", "<b>", "<c>"]}, "<a><b>", 2 / 3),
]


@pytest.mark.parametrize(("config", "completion", "expected"), TAG_COUNT_TABLE)
def test_tag_count_verdicts(config, completion, expected):
    [result] = get_reward("tag_count", config).details([completion])
    assert result.score == pytest.approx(expected), result.reason


def test_tag_count_reason_lists_wrong_tags():
    [result] = get_reward("tag_count").details(["<think><think>x</think> 4"])
    assert result.reason == "1/4 tags once; wrong: <think> x2, <answer> x0, </answer> x0"


@pytest.mark.parametrize("bad", [{"tags": []}, {"tags": ["<a>", "<a>"]}, {"tags": [""]}, {"tag": ["<a>"]}])
def test_tag_count_bad_config(bad):
    with pytest.raises(ConfigError, match="tag_count"):
        get_reward("tag_count", bad)


REGEX_TABLE = [
    ({"pattern": r"\\boxed\{\d+\}"}, r"so \boxed{42}.", 1.0),
    ({"pattern": r"\\boxed\{\d+\}"}, r"so \boxed{x}.", 0.0),
    ({"pattern": r"\d+", "mode": "fullmatch"}, " 42\n", 1.0),
    ({"pattern": r"\d+", "mode": "fullmatch", "strip": False}, " 42\n", 0.0),
    ({"pattern": r"\d+", "mode": "fullmatch"}, "42 apples", 0.0),
    ({"pattern": "answer", "ignore_case": True}, "ANSWER: 4", 1.0),
    ({"pattern": "answer"}, "ANSWER: 4", 0.0),
    ({"pattern": "^4$", "multiline": True}, "x\n4\ny", 1.0),
    ({"pattern": "^4$"}, "x\n4\ny", 0.0),
    ({"pattern": "a.b", "dotall": True}, "a\nb", 1.0),
    ({"pattern": "a.b"}, "a\nb", 0.0),
    ({"pattern": "x", "max_chars": 5}, "xxxxxx", 0.0),  # too long to match is the completion's 0.0
    ({"pattern": "x", "max_chars": 5, "overlong_score": None}, "xxxxxx", None),
    ({"pattern": "x", "max_chars": 5, "overlong_score": 0.0}, "xxxxxx", 0.0),
    ({"pattern": "x", "max_chars": 5}, "  xxxxx  ", 1.0),  # length counted after strip
]


@pytest.mark.parametrize(("config", "completion", "expected"), REGEX_TABLE)
def test_regex_match_verdicts(config, completion, expected):
    [result] = get_reward("regex_match", config).details([completion])
    assert result.score == expected, result.reason


def test_regex_match_aborts_catastrophic_backtracking():
    pytest.importorskip("regex")
    reward = get_reward("regex_match", {"pattern": r"(a|aa)+$", "timeout_s": 0.2})
    start = time.perf_counter()
    [result] = reward.details(["a" * 5000 + "b"])
    assert time.perf_counter() - start < 3.0
    assert result.score == 0.0 and "no match found within timeout_s=0.2s" in result.reason


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"pattern": "(unclosed"}, "invalid pattern"),
        ({"pattern": "a{2,1}"}, "invalid pattern"),
        ({"pattern": ""}, "pattern"),
        ({}, "pattern"),
        ({"pattern": "a", "mode": "match"}, "mode"),
        ({"pattern": "a", "max_chars": 0}, "max_chars"),
    ],
)
def test_regex_match_bad_config(bad, message):
    with pytest.raises(ConfigError, match=message):
        get_reward("regex_match", bad)


def test_regex_match_pickles():
    reward = pickle.loads(pickle.dumps(get_reward("regex_match", {"pattern": r"\d+", "mode": "fullmatch"})))
    assert reward(["12", "1a"]) == [1.0, 0.0]


PERSON_SCHEMA = {
    "type": "object",
    "required": ["name", "age"],
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "additionalProperties": False,
}


class Person(BaseModel):
    """A pydantic model for the ``pydantic_model`` path (imported by dotted path below)."""

    name: str
    age: int


PERSON_MODEL = f"{__name__}:Person"

JSON_TABLE = [
    ({"json_schema": PERSON_SCHEMA}, '{"name": "Ada", "age": 36}', 1.0, "valid"),
    ({"json_schema": PERSON_SCHEMA}, '  {"name": "Ada", "age": 36, "tags": ["x"]}\n', 1.0, "valid"),
    ({"json_schema": PERSON_SCHEMA}, '{"name": "Ada", "age": "36"}', 0.0, "$.age"),
    ({"json_schema": PERSON_SCHEMA}, '{"name": "Ada", "age": -1}', 0.0, "$.age"),
    ({"json_schema": PERSON_SCHEMA}, '{"name": "Ada", "age": 1, "tags": ["x", 2]}', 0.0, "$.tags[1]"),
    ({"json_schema": PERSON_SCHEMA}, '{"name": "Ada"}', 0.0, "'age' is a required property"),
    ({"json_schema": PERSON_SCHEMA}, '{"name": "Ada", "age": 1, "x": 0}', 0.0, "Additional properties"),
    ({"json_schema": PERSON_SCHEMA}, "name: Ada", 0.0, "not valid JSON"),
    ({"json_schema": PERSON_SCHEMA}, "", 0.0, "not valid JSON"),
    ({"json_schema": PERSON_SCHEMA}, "[" * 100_000 + "]" * 100_000, 0.0, ""),
    (
        {"json_schema": PERSON_SCHEMA},
        f'Here:\n{FENCE}json\n{{"name": "A", "age": 1}}\n{FENCE}\n'
        f'and fixed:\n{FENCE}json\n{{"name": "B", "age": "x"}}\n{FENCE}',
        0.0,
        "$.age",
    ),
    (
        {"json_schema": PERSON_SCHEMA},
        f'<think>draft {{"age": "x"}}</think>\n{FENCE}json\n{{"name": "B", "age": 2}}\n{FENCE}',
        1.0,
        "valid",
    ),
    ({"json_schema": PERSON_SCHEMA}, f'{FENCE}\n{{"name": "B", "age": 2}}\n{FENCE}', 1.0, "valid"),
    ({"json_schema": PERSON_SCHEMA}, f'{FENCE}python\n{{"name": "B", "age": 2}}\n{FENCE}', 0.0, "not valid JSON"),
    ({"json_schema": PERSON_SCHEMA, "extract": "fenced"}, '{"name": "B", "age": 2}', 0.0, "no fenced JSON block"),
    ({"json_schema": PERSON_SCHEMA, "extract": "whole"}, f'{FENCE}json\n{{"name": "B", "age": 2}}\n{FENCE}', 0.0, ""),
    ({"json_schema": True}, "[1, 2]", 1.0, "valid"),
    ({"json_schema": PERSON_SCHEMA, "max_chars": 10}, '{"name": "Ada", "age": 36}', 0.0, "max_chars"),
    ({"pydantic_model": PERSON_MODEL}, '{"name": "Ada", "age": 36}', 1.0, "valid Person"),
    ({"pydantic_model": PERSON_MODEL}, '{"name": "Ada", "age": "old"}', 0.0, "$.age"),
    ({"pydantic_model": PERSON_MODEL}, '{"age": 3}', 0.0, "$.name: Field required"),
    ({"pydantic_model": PERSON_MODEL}, "[]", 0.0, "$: Input should be"),
    # strict JSON: what Python's lenient decoder accepts, or chokes on, is wrong (0.0), never unscorable
    ({"json_schema": True}, '{"a": ' + "1" * 100_000 + "}", 0.0, "a number of 100000 characters (limit 4300)"),
    ({"json_schema": True}, '{"a": -' + "1" * 4300 + "}", 0.0, "a number of 4301 characters"),
    ({"json_schema": True}, '{"a": 1.' + "5" * 5000 + "}", 0.0, "a number of 5002 characters"),
    ({"json_schema": True}, '{"a": ' + "9" * 4300 + "}", 1.0, "valid"),
    ({"json_schema": True}, '{"a": NaN}', 0.0, "NaN is not a JSON number"),
    ({"json_schema": True}, "[Infinity]", 0.0, "Infinity is not a JSON number"),
    ({"json_schema": True}, "-Infinity", 0.0, "-Infinity is not a JSON number"),
    ({"json_schema": True}, '{"a": 1e999}', 0.0, "1e999 is out of range"),
    ({"json_schema": True}, '{"a": -1E+400}', 0.0, "-1E+400 is out of range"),
    ({"json_schema": True}, '{"a": 1e-999, "b": 1.5e300}', 1.0, "valid"),
    ({"json_schema": {"type": "number"}}, "NaN", 0.0, "NaN is not a JSON number"),
    ({"pydantic_model": PERSON_MODEL}, '{"name": "Ada", "age": ' + "7" * 10_000 + "}", 0.0, "limit 4300"),
]


@pytest.mark.parametrize(("config", "completion", "expected", "reason_part"), JSON_TABLE)
def test_json_schema_verdicts(config, completion, expected, reason_part):
    [result] = get_reward("json_schema", config).details([completion])
    assert result.score == expected, result.reason
    assert reason_part in result.reason


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({}, "exactly one of json_schema or pydantic_model"),
        ({"json_schema": PERSON_SCHEMA, "pydantic_model": PERSON_MODEL}, "exactly one"),
        ({"json_schema": {"type": "no-such-type"}}, "invalid JSON Schema"),
        ({"json_schema": {"required": "name"}}, "invalid JSON Schema"),
        ({"pydantic_model": "not a path"}, "pkg.mod:Model"),
        ({"pydantic_model": "rewardsmith_no_such_module:Model"}, "cannot import"),
        ({"pydantic_model": f"{__name__}:NoSuchModel"}, "cannot import"),
        ({"pydantic_model": f"{__name__}:PERSON_SCHEMA"}, "not a pydantic model"),
    ],
)
def test_json_schema_bad_config(bad, message):
    with pytest.raises(ConfigError, match=message):
        get_reward("json_schema", bad)


def test_json_schema_with_model_pickles():
    reward = pickle.loads(pickle.dumps(get_reward("json_schema", {"pydantic_model": PERSON_MODEL})))
    assert reward(['{"name": "A", "age": 1}', "{}"]) == [1.0, 0.0]


def test_extract_json_text_picks_last_json_block():
    text = f"{FENCE}json\n1\n{FENCE}\n{FENCE}text\n2\n{FENCE}\n{FENCE}JSON\n3\n{FENCE}"
    assert extract_json_text(text, "auto") == "3"
    assert extract_json_text("no fence", "fenced") is None
    assert extract_json_text(" 5 ", "auto") == "5"
