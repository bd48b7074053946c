"""Verdict tables for reading judge answers: choices, scores, rankings, soft labels, order averaging."""

from __future__ import annotations

import math
import pickle
import re

import pytest

from rewardsmith.judges.accounting import Accountant
from rewardsmith.judges.base import ChatParams, ChatResult, OrderVerdict, TokenLogprob, Usage
from rewardsmith.judges.cache import RequestCache, cache_key
from rewardsmith.judges.clients.factory import JudgeClientConfig
from rewardsmith.judges.limits import RateLimiter
from rewardsmith.judges.pairwise import combine_orders, read_order
from rewardsmith.judges.parsing import (
    option_distribution,
    parse_choice,
    parse_ranking,
    parse_score,
    read_choice,
    read_score_answer,
)
from rewardsmith.judges.rank import rank_from_pairs
from rewardsmith.judges.scale import read_score
from rewardsmith.judges.templates import TemplateError, packaged_templates, render_messages, template_text
from rewardsmith.reward import ConfigError
from tests.support.judge_prompts import quoted

CHOICES = [
    # (judge answer, expected label or None = abstain)
    ("A", "A"),
    ("B", "B"),
    (" (B).", "B"),
    ("(A)", "A"),
    ("**A**", "A"),
    ("Response A", "A"),
    ("B because it is correct", "B"),
    ("A: the first one", "A"),
    ("I think A is nice. Verdict: B", "B"),
    ("Verdict: B", "B"),
    ("**Verdict:** A", "A"),
    ("Answer: A", "A"),
    ("The answer is (A)", "A"),
    ("[[A]]", "A"),
    ("Verdict: [[B]]", "B"),
    ("After weighing both, my final verdict is: [[B]]", "B"),
    ('{"verdict": "B"}', "B"),
    ('{"winner": "Response A"}', "A"),
    ("Response B is better.", "B"),
    ("B is better", "B"),
    ("A is better than B.", "A"),
    ("Option (B) is more helpful.", "B"),
    ("I prefer B.", "B"),
    ("Response A is better in tone. Verdict: B", "B"),
    # the article "a" is not option A
    ("The winner is B. It gives a better answer a user can follow.", "B"),
    ("Both try to answer a tricky question, but B is clearly better.", "B"),
    ("a", None),
    ("a user would like this one", None),
    ("A user would prefer the first reply.", None),
    ("The answer is a matter of taste.", None),
    # both labels named without one explicit verdict
    ("A or B, hard to say", None),
    ("A and B are both fine", None),
    ("Verdict: A/B", None),
    ("Neither A nor B is better.", None),
    ("Response A is better in tone, but B is better overall.", None),
    ("Verdict: A. On reflection, Verdict: B", None),
    # no verdict at all, a tie, or a label that is not an option
    ("I don't think B is better.", None),
    ("[[C]]", None),
    ("Verdict: tie", None),
    ('{"verdict": "C"}', None),
    ("Both are good", None),
    ("Apples", None),
    ("", None),
    ("The better response is", None),
]


@pytest.mark.parametrize(("text", "expected"), CHOICES)
def test_parse_choice(text, expected):
    assert parse_choice(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("A or B, hard to say", "names both A and B"),
        ("Response A is better in tone, but B is better overall.", "conflicting"),
        ("Verdict: A. On reflection, Verdict: B", "conflicting"),
        ("[[C]]", "tie"),
        ("Apples", "no verdict"),
        ("", "empty"),
    ],
)
def test_choice_abstain_says_why(text, reason):
    reading = read_choice(text)
    assert reading.choice is None
    assert reason in reading.reason


def test_parse_choice_other_labels():
    assert parse_choice("Verdict: 2", labels=("1", "2")) == "2"
    assert parse_choice("1 or 2, hard to say", labels=("1", "2")) is None


def test_hostile_answers_parse_in_linear_time():
    import time

    n = 20_000
    hostile = [
        "Verdict" + " " * n + "x",
        "Answer is" + "*" * n,
        "(" * n + "A",
        "A" + " " * n + "or" + " " * n + "x",
        "Response " + " " * n + "[" * n + "B" + " " * n,
        "Score" + " " * n + "x",
        "4" + " " * n + "x",
    ]
    started = time.perf_counter()
    for text in hostile:
        assert parse_choice(text) is None
        assert parse_score(text, 5) is None
    assert time.perf_counter() - started < 2.0


SCORES = [
    # (answer, scale, expected score or None)
    ("4", 5, 4),
    ("**5**", 5, 5),
    ("Score: 3", 5, 3),
    ("Score: 3.", 5, 3),
    ("I'd give it 2/5.", 5, 2),
    ('{"score": 1, "reason": "wrong"}', 5, 1),
    ("Rating: [[4]]", 5, 4),
    ("[[2]]", 5, 2),
    ("Rating: 4.5", 10, 4.5),
    ("Score: 4.5/5", 5, 4.5),
    ('{"score": 3.5}', 5, 3.5),
    ("Rating: 10", 10, 10),
    ("Score: 4/5", 5, 4),
    ("7", 5, None),  # outside 1..5
    ("0", 5, None),
    ("Score: 5.5", 5, None),
    ("Score: -1", 5, None),
    ("Score: 2. Actually, Score: 4", 5, None),  # two different scores: abstain
    ("great answer", 5, None),
    # a hedge or a range is not a score
    ("between 3 and 4", 5, None),
    ("Score: 3-4", 5, None),
    ("Score: 3 or 4", 5, None),
    ("Rating: 4 to 5", 5, None),
    ("Score: 4 - clear and correct", 5, 4),
    ("I'd say 2 at first, but Score: 4", 5, 4),
]


@pytest.mark.parametrize(("text", "scale", "expected"), SCORES)
def test_parse_score(text, scale, expected):
    assert parse_score(text, scale) == expected


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("4", 0),
        ("Score: 4", 7),
        ("I'd say 2 at first, but Score: 4", 31),
        ('I think "score": 2 is low. {"score": 4}', 37),
        ("Rating: [[3]] (score 3)", 10),
        ("I'd give it 4/5.", 12),
    ],
)
def test_score_reading_locates_the_score(text, at):
    reading = read_score_answer(text, 5)
    assert reading.at == at and float(text[at]) == reading.score


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 > 1 > 3", [2, 1, 3]),
        ('{"ranking": [3, 1, 2]}', [3, 1, 2]),
        ("1 > 1 > 2", None),
        ("1 > 2", None),
        ("no", None),
    ],
)
def test_parse_ranking(text, expected):
    assert parse_ranking(text, 3) == expected


def lp(token: str, top: dict[str, float]) -> TokenLogprob:
    return TokenLogprob(token=token, logprob=top.get(token, -1.0), top=top)


def test_option_distribution_normalises_over_option_variants():
    log = math.log
    logprobs = [
        lp("The", {"The": log(0.9)}),
        lp(" A", {" A": log(0.3), "A": log(0.1), " B": log(0.2), " C": log(0.4)}),
    ]
    distribution, position = option_distribution(logprobs, ["A", "B"])
    assert position == 1
    assert distribution["A"] == pytest.approx(0.4 / 0.6)
    assert sum(distribution.values()) == pytest.approx(1.0)


def test_option_distribution_none_without_an_option_token():
    assert option_distribution([lp("Hello", {"Hello": -0.1})], ["A", "B"]) is None
    # a first token "a" is the article, not option A; its uppercase alternative is not the answer either
    assert option_distribution([lp(" a", {" a": math.log(0.9), " A": math.log(0.1)})], ["A", "B"]) is None
    assert option_distribution(None, ["A", "B"]) is None


def result(text: str, logprobs=None, finish="stop") -> ChatResult:
    return ChatResult(text=text, logprobs=logprobs, finish_reason=finish)


ORDERS = [
    # (answer, chain_of_thought, expected prob_first, source)
    (result("A", [lp("A", {"A": math.log(0.6), "B": math.log(0.2)})]), False, 0.75, "logprobs"),
    (result("B", [lp("B", {"B": math.log(0.5)})]), False, 0.0, "logprobs"),
    (result("B"), False, 0.0, "parsed"),
    (result("Reasoning... Verdict: A"), True, 0.6, "parsed"),
    (result("Reasoning... Verdict: B"), True, 0.4, "parsed"),
    (result("I cannot decide"), False, None, "abstain"),
    (result("The better", finish="length"), False, None, "abstain"),
]


@pytest.mark.parametrize(("answer", "cot", "prob_first", "source"), ORDERS)
def test_read_order(answer, cot, prob_first, source):
    verdict = read_order(answer, chain_of_thought=cot)
    assert verdict.source == source
    assert verdict.prob_first == (pytest.approx(prob_first) if prob_first is not None else None)


def tokens(text: str, p: float = 0.7) -> list[TokenLogprob]:
    """Word and punctuation tokens of ``text``; an option letter gets P = p, the other letter 1 - p."""
    out = []
    for token in re.findall(r"\s*\w+|\s*[^\s\w]+|\s+", text):
        label = token.strip()
        top = {token: math.log(0.9)}
        if label in ("A", "B"):
            top = {token: math.log(p), token.replace(label, "B" if label == "A" else "A"): math.log(1 - p)}
        out.append(lp(token, top))
    return out


@pytest.mark.parametrize(
    ("text", "at"),
    [("B", 0), ("I think A is nice. Verdict: B", 28), ('{"verdict": "A"}', 13), ("Response B is better.", 9)],
)
def test_choice_reading_locates_the_verdict_label(text, at):
    reading = read_choice(text)
    assert reading.at == at and text[at] == reading.choice


LOGPROB_ORDERS = [
    # (answer text, P of the written letter, expected prob_first or None, source, reason fragment)
    ("A", 0.8, 0.8, "logprobs", ""),
    ("I think A is nice. Verdict: B", 0.8, 0.2, "logprobs", ""),  # the verdict token, not the first letter
    ("Neither A nor B is better.", 0.7, None, "abstain", "names both A and B"),
    ("A or B, hard to say.", 0.7, None, "abstain", "names both A and B"),
    ("Both A and B are equally good.", 0.7, None, "abstain", "names both A and B"),
    ("Verdict: A", 0.3, None, "abstain", "log-probs and text disagree"),
    ("Verdict: A", 0.5, 0.5, "logprobs", ""),  # indifferent log-probs do not contradict the text
]


@pytest.mark.parametrize(("text", "p", "prob_first", "source", "reason"), LOGPROB_ORDERS)
def test_read_order_with_logprobs_follows_the_text(text, p, prob_first, source, reason):
    verdict = read_order(result(text, tokens(text, p)))
    assert (verdict.source, verdict.prob_first) == (source, pytest.approx(prob_first) if prob_first else None)
    assert reason in verdict.reason
    if prob_first is not None:
        assert verdict.choice == ("first" if text.endswith("A") else "second")


def test_logprobs_that_do_not_line_up_with_the_text_leave_the_parsed_verdict():
    shifted = read_order(result("Verdict: B", [lp("Something", {"Something": -0.1}), lp(" else", {" else": -0.1})]))
    assert (shifted.source, shifted.prob_first, shifted.choice) == ("parsed", 0.0, "second")
    assert "no log-probs at the verdict token" in shifted.reason
    # a server that drops the answer's leading space from the text still lines up
    spaced = read_order(result("B", [lp(" B", {" B": math.log(0.9), " A": math.log(0.1)})]))
    assert spaced.source == "logprobs" and spaced.prob_first == pytest.approx(0.1)


def order(p: float | None) -> OrderVerdict:
    if p is None:
        return OrderVerdict(source="abstain", reason="no verdict")
    return OrderVerdict(prob_first=p, choice="first" if p > 0.5 else "second" if p < 0.5 else None, source="parsed")


COMBINE = [
    # (P_ab(first), P_ba(first), require_both, prob_a, flipped, abstained)
    (0.8, 0.2, True, 0.8, False, False),  # consistent: a wins in both orders
    (0.8, 0.8, True, 0.5, True, False),  # always the first position: flipped, no preference
    (0.3, 0.9, True, 0.2, False, False),
    (0.8, None, True, None, False, True),
    (0.8, None, False, 0.8, False, False),
    (None, None, False, None, False, True),
]


@pytest.mark.parametrize(("p_ab", "p_ba", "both", "prob_a", "flipped", "abstained"), COMBINE)
def test_combine_orders(p_ab, p_ba, both, prob_a, flipped, abstained):
    verdict = combine_orders(order(p_ab), order(p_ba), require_both=both)
    assert verdict.prob_a == (pytest.approx(prob_a) if prob_a is not None else None)
    assert verdict.flipped is flipped
    assert verdict.abstained is abstained
    if abstained:
        assert verdict.winner is None and verdict.reason.startswith("abstain")


def test_read_score_probability_weighted():
    top = {str(s): math.log(p) for s, p in zip(range(1, 6), [0.0625, 0.0625, 0.125, 0.25, 0.5], strict=True)}
    verdict = read_score(result("5", [lp("5", top)]), 5)
    assert verdict.source == "logprobs"
    assert verdict.score == pytest.approx(0.0625 + 0.125 + 0.375 + 1.0 + 2.5)
    assert 0.0 <= verdict.normalized <= 1.0
    assert sum(verdict.distribution.values()) == pytest.approx(1.0)


def test_read_score_reads_the_score_token_and_abstains_when_it_disagrees():
    def digits(text: str, p: float) -> list[TokenLogprob]:  # each digit at p, the one below it at 1 - p
        out = []
        for token in re.findall(r"\s*\w+|\s*[^\s\w]+|\s+", text):
            label, top = token.strip(), {token: math.log(0.9)}
            if len(label) == 1 and label in "2345":
                top = {token: math.log(p), token.replace(label, str(int(label) - 1)): math.log(1 - p)}
            out.append(lp(token, top))
        return out

    text = "I'd say 2 at first, but Score: 4"
    verdict = read_score(result(text, digits(text, 0.8)), 5)
    assert (verdict.source, verdict.score) == ("logprobs", pytest.approx(0.8 * 4 + 0.2 * 3))
    disagree = read_score(result("Score: 4", digits("Score: 4", 0.3)), 5)
    assert (disagree.source, disagree.score) == ("abstain", None)
    assert "log-probs and text disagree: the text says 4, the log-probs favour 3" in disagree.reason
    hedge = read_score(result("between 3 and 4", digits("between 3 and 4", 0.9)), 5)
    assert (hedge.source, hedge.score) == ("abstain", None)
    # log-probs that do not line up with the text leave the parsed score
    shifted = read_score(result("Score: 4", [lp("Something", {"Something": -0.1})]), 5)
    assert (shifted.source, shifted.score) == ("parsed", 4.0)
    assert "parsed score used" in shifted.reason


def test_read_score_parsed_and_abstain():
    assert read_score(result("Score: 3"), 5).normalized == 0.5
    assert read_score(result("fine"), 5).score is None
    assert "cut off" in read_score(result("My score", finish="length"), 5).reason


def test_rank_from_pairs_soft_copeland():
    pairs = [(0, 1), (0, 2), (1, 2)]
    verdicts = [combine_orders(order(a), order(1 - a)) for a in (0.2, 0.6, 0.9)]
    ranked = rank_from_pairs(3, pairs, verdicts)
    assert ranked.order == [1, 0, 2]
    abstained = [combine_orders(order(None), order(None))] * 2 + [verdicts[2]]
    assert rank_from_pairs(3, pairs, abstained).order is None


def test_templates_render_to_messages():
    assert {"pairwise", "pairwise_cot", "scale", "rank"} <= set(packaged_templates())
    assert template_text("rubric") == template_text("scale")  # the scale template's former name still finds it
    messages = render_messages("pairwise", prompt="P?", first="one", second="two", question="Which is kinder?")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert quoted(messages[1]["content"], "response-A") == "one" and "Which is kinder?" in messages[1]["content"]
    with pytest.raises(TemplateError):
        render_messages("no-such-template")
    with pytest.raises(TemplateError):
        render_messages("pairwise", prompt="missing variables")


def test_user_template_file(tmp_path):
    path = tmp_path / "mine.jinja"
    path.write_text("[user]\nPick A or B for {{ prompt }}: {{ first }} / {{ second }}")
    (message,) = render_messages(str(path), prompt="x", first="1", second="2")
    assert message["role"] == "user" and message["content"].startswith("Pick A or B for <prompt-")
    content = message["content"]
    assert (quoted(content, "prompt"), quoted(content, "response-A"), quoted(content, "response-B")) == ("x", "1", "2")


def test_cache_key_depends_on_model_messages_params():
    messages = [{"role": "user", "content": "hi"}]
    base = cache_key("m", messages, ChatParams())
    assert base == cache_key("m", [{"content": "hi", "role": "user"}], ChatParams())
    assert base != cache_key("m2", messages, ChatParams())
    assert base != cache_key("m", [{"role": "user", "content": "hi!"}], ChatParams())
    assert base != cache_key("m", messages, ChatParams(top_logprobs=5))


def test_cache_shared_between_processes(tmp_path):
    import multiprocessing

    cache = RequestCache(tmp_path)
    context = multiprocessing.get_context("spawn")
    process = context.Process(target=_write_entry, args=(str(tmp_path),))
    process.start()
    process.join(60)
    assert process.exitcode == 0
    hit = cache.get("written-by-child")
    assert hit is not None and hit.text == "A" and hit.cached
    assert cache.get("absent") is None
    assert (cache.hits, cache.misses) == (1, 1)
    clone = pickle.loads(pickle.dumps(cache))
    assert clone.get("written-by-child").text == "A"


def _write_entry(directory: str) -> None:
    RequestCache(directory).put("written-by-child", ChatResult(text="A", usage=Usage(prompt_tokens=3)))


def test_rate_limiter_books_slots_in_a_sliding_window():
    now = [0.0]
    limiter = RateLimiter(rpm=3, clock=lambda: now[0])
    assert [round(limiter.reserve(1)[1]) for _ in range(5)] == [0, 0, 0, 60, 60]
    tokens = RateLimiter(tpm=100, clock=lambda: now[0])
    assert [round(tokens.reserve(40)[1]) for _ in range(3)] == [0, 0, 60]
    reservation, _ = tokens.reserve(10)
    tokens.settle(reservation, 5)
    with pytest.raises(ValueError):
        RateLimiter(rpm=0)


def test_accountant_prices_and_cache_hits():
    accountant = Accountant({"gpt": {"input": 2.0, "output": 8.0}, "*": {"input": 1.0}})
    accountant.record("gpt", Usage(prompt_tokens=1_000_000, completion_tokens=500_000), cached=False)
    accountant.record("other", Usage(prompt_tokens=1_000_000), cached=False)
    accountant.record("gpt", Usage(prompt_tokens=10), cached=True)
    report = accountant.report()
    assert report.cost_usd == pytest.approx(2.0 + 4.0 + 1.0)
    assert (report.requests, report.cache_hits) == (2, 1)
    assert report.by_model["gpt"]["cost_usd"] == pytest.approx(6.0)
    assert pickle.loads(pickle.dumps(accountant)).report() == report


def test_accountant_counts_failed_calls_as_sent_and_retries_apart():
    accountant = Accountant()
    accountant.record("m", Usage(prompt_tokens=10), cached=False, retries=2)
    accountant.record_error("m", retries=4)
    accountant.record("m", Usage(), cached=True)
    report = accountant.report()
    assert (report.calls, report.requests, report.cache_hits, report.errors, report.retries) == (3, 2, 1, 1, 6)
    assert report.by_model["m"]["requests"] == 2 and report.by_model["m"]["errors"] == 1
    assert report.summary().startswith("judge calls: 3 (2 sent, 1 cached = 33%; 1 of the sent failed); retries: 6;")


def test_client_config_validates():
    with pytest.raises(ValueError, match="needs a model"):
        JudgeClientConfig(backend="openai")
    with pytest.raises(ValueError):
        JudgeClientConfig(backend="openai", model="m", concurrency=0)
    with pytest.raises(ValueError):
        JudgeClientConfig(backend="nope")


def test_llm_judge_config_errors_at_construction():
    from rewardsmith.registry import get_reward

    with pytest.raises(ConfigError, match="chain_of_thought"):
        get_reward("llm_judge", {"mode": "rubric", "chain_of_thought": True})
    with pytest.raises(ConfigError, match=r"unknown|Extra"):
        get_reward("llm_judge", {"rubrik": "typo"})
    with pytest.raises(ConfigError, match="no-such-template"):
        get_reward("llm_judge", {"template": "no-such-template"})
    with pytest.raises(ConfigError, match="former name 'rubric'"):
        get_reward("llm_judge", {"guideline": "Correct?", "rubric": "Correct?"})


def test_llm_judge_spec_keys_from_before_the_scale_judge_had_its_name():
    from rewardsmith.registry import get_reward

    former = get_reward("llm_judge", {"mode": "rubric", "rubric": "Is it correct?", "template": "rubric"}).config
    current = get_reward("llm_judge", {"mode": "scale", "guideline": "Is it correct?", "template": "scale"}).config
    assert (former.mode, former.guideline) == (current.mode, current.guideline) == ("scale", "Is it correct?")
    assert get_reward("llm_judge", {}).config.mode == "scale"


def test_light_import():
    import subprocess
    import sys

    code = "import sys, rewardsmith.judges; print('torch' in sys.modules, 'openai' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert output.split() == ["False", "False"]
