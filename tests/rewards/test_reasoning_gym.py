"""The reasoning_gym reward against reasoning-gym's own scorers: 240 verdicts built from them, and the None/0.0 rules.

The verdict table is not written by hand: each expected value is what the family's ``score_answer`` gives the
answer that reasoning-gym's ``extract_answer`` takes out of the completion, on the entry as reasoning-gym made it.
The reward sees the same entry only as the columns :func:`dataset` writes (metadata through JSON), as in training.
One rule is the reward's own: a completion without an answer tag scores 0.0, where fraction_simplification's and
puzzle24's scorers give ``None`` 0.01 (their exception path), which would pay a policy for dropping the format.
"""

from __future__ import annotations

import pickle
import time

import pytest

from tests.support.extras import require_extras

require_extras("reasoning-gym")

import reasoning_gym
from reasoning_gym.utils import extract_answer

from rewardsmith import ConfigError, get_reward
from rewardsmith.rewards import reasoning_gym as rg

#: Families with exact, partial-credit (word_sorting, spell_backward, prime_factorization, fraction_simplification),
#: gold-less (propositional_logic: the scorer checks the answer) and tuple-metadata (rearc, arc_1d) scorers.
FAMILIES = (
    "basic_arithmetic",
    "chain_sum",
    "word_sorting",
    "spell_backward",
    "letter_counting",
    "prime_factorization",
    "caesar_cipher",
    "fraction_simplification",
    "arc_1d",
    "propositional_logic",
    "rearc",
    "word_sequence_reversal",
)
PER_FAMILY = 20
SEED = 11


def completions_for(gold: str, other: str, kind: int) -> str:
    """Five shapes of answer: right, wrong (another entry's gold), reformatted, a draft then the answer, no tag."""
    return [
        f"<think>working</think>\n<answer>{gold}</answer>",
        f"<answer>{other}</answer>",
        f"<answer>\n {gold.replace(', ', ',').lower()} \n</answer>",
        f"<answer>draft</answer> on reflection <answer>{gold}</answer>",
        f"The answer is {gold}.",
    ][kind % 5]


def their_verdict(data, answer: str | None, entry) -> float:
    if answer is None:  # no answer tag: 0.0 by the reward's rule (two families' scorers give None 0.01)
        return 0.0
    try:
        return float(data.score_answer(answer, entry))
    except Exception:  # their scorer refusing an answer is a wrong answer
        return 0.0


def verdict_table():
    """``(completion, row, expected)`` for every family and entry, expected from the family's own scorer."""
    rows = rg.dataset(FAMILIES, size=PER_FAMILY, seed=SEED)
    table = []
    for family in FAMILIES:
        data = reasoning_gym.create_dataset(family, size=PER_FAMILY, seed=SEED)
        family_rows = [row for row in rows if row["task"] == family]
        for i in range(PER_FAMILY):
            entry = data[i]
            other = str(data[(i + 1) % PER_FAMILY]["answer"])
            completion = completions_for(str(entry["answer"]), other, i)
            table.append((completion, family_rows[i], their_verdict(data, extract_answer(completion), entry)))
    return table


@pytest.fixture(scope="module")
def reward():
    built = get_reward("reasoning_gym", {"workers": 2})
    yield built
    built.close()


@pytest.fixture(scope="module")
def table():
    return verdict_table()


def test_the_table_covers_what_it_claims(table):
    expected = [e for _, _, e in table]
    assert len(table) == len(FAMILIES) * PER_FAMILY == 240
    assert {1.0, 0.0} <= set(expected)
    assert any(0.0 < e < 1.0 for e in expected)  # partial credit is in it
    assert {row["task"] for _, row, _ in table} == set(FAMILIES)


def test_verdicts_equal_reasoning_gyms_own_scorers(reward, table):
    columns = {key: [row[key] for _, row, _ in table] for key in table[0][1]}
    results = reward.details([c for c, _, _ in table], **columns)
    mismatches = [
        (row["task"], completion, expected, result.score, result.reason)
        for (completion, row, expected), result in zip(table, results, strict=True)
        if result.score != pytest.approx(expected)
    ]
    assert not mismatches, mismatches[:5]


# (completion, columns, expected score, a word of the reason)
def _rules_table():
    [row] = rg.dataset(["prime_factorization"], size=1, seed=3)
    meta = row["metadata"]
    right = f"<answer>{row['answer']}</answer>"
    return [
        (right, {"metadata": [meta], "answer": [row["answer"]]}, 1.0, "scorer"),
        # wrong or missing answers are 0.0
        ("no tags at all", {"metadata": [meta], "answer": [row["answer"]]}, 0.0, "no <answer>"),
        # the answer is read after the reasoning only (the verifier card's gold-in-think exploit)
        (
            f"<think>\n<answer>{row['answer']}</answer>\n</think>\nNo final answer.",
            {"metadata": [meta], "answer": [row["answer"]]},
            0.0,
            "no <answer>...</answer> after the reasoning",
        ),
        (
            f"<think>sure it is <answer>{row['answer']}</answer>",
            {"metadata": [meta], "answer": [row["answer"]]},
            0.0,
            "never closed",
        ),
        (
            f"<think><answer>0</answer></think><answer>{row['answer']}</answer>",
            {"metadata": [meta], "answer": [row["answer"]]},
            1.0,
            "scorer: 1",
        ),
        ("<answer>zzz</answer>", {"metadata": [meta], "answer": [row["answer"]]}, 0.0, "rejected the answer"),
        # an empty answer is an answer: the scorer's own partial credit for a malformed one stands
        ("<answer></answer>", {"metadata": [meta], "answer": [row["answer"]]}, 0.01, "scorer: 0.01"),
        # the row's data names no scorable task: None with the reason
        (right, {"answer": [row["answer"]]}, None, "metadata"),
        (right, {"metadata": [None], "answer": [row["answer"]]}, None, "metadata"),
        (right, {"metadata": ["{not json"], "answer": [row["answer"]]}, None, "not JSON"),
        (right, {"metadata": ["[1, 2]"], "answer": [row["answer"]]}, None, "not a JSON object"),
        (right, {"metadata": ["[" * 100_000], "answer": [row["answer"]]}, None, "not JSON (RecursionError"),
        (right, {"metadata": ['{"number": 6}'], "answer": ["2 × 3"]}, None, "source_dataset"),
        (right, {"metadata": ['{"source_dataset": "no_such_task"}'], "answer": ["1"]}, None, "unknown reasoning-gym"),
        # metadata without what the scorer reads: it raises on the row's own gold too, so the row is at fault
        (
            "<answer>a, b</answer>",
            {"metadata": ['{"source_dataset": "word_sorting"}'], "answer": ["a, b"]},
            None,
            "own answer too",
        ),
    ]


@pytest.mark.parametrize(("completion", "columns", "expected", "word"), _rules_table())
def test_none_and_zero_rules(reward, completion, columns, expected, word):
    [result] = reward.details([completion], **columns)
    assert result.score == expected, result.reason
    assert word in result.reason


def test_a_task_column_names_the_family(reward):
    [row] = rg.dataset(["leg_counting"], size=1, seed=5)
    by_column = get_reward("reasoning_gym", {"task_column": "task", "workers": 2})
    meta = '{"animals": ' + rg.encode_metadata(rg.decode_metadata(row["metadata"])["animals"]) + "}"
    answer = f"<answer>{row['answer']}</answer>"
    assert by_column([answer], metadata=[meta], answer=[row["answer"]], task=["leg_counting"]) == [1.0]
    assert by_column([answer], metadata=[meta], answer=[row["answer"]], task=[None]) == [None]


def test_a_plain_dict_metadata_and_a_bare_answer(reward):
    data = reasoning_gym.create_dataset("basic_arithmetic", size=1, seed=2)
    entry = data[0]
    bare = get_reward("reasoning_gym", {"answer_tag": None, "workers": 2})
    assert bare([entry["answer"], "x"], metadata=[entry["metadata"]] * 2, answer=[entry["answer"]] * 2) == [1.0, 0.0]


def test_a_completion_that_makes_checking_overrun_scores_zero_alone(reward):
    """reasoning-gym's answer pattern is quadratic in unclosed tags; the worker is killed, the neighbour is scored."""
    [row] = rg.dataset(["basic_arithmetic"], size=1, seed=1)
    quick = get_reward("reasoning_gym", {"timeout_s": 1.0, "workers": 2})
    assert quick.pool is reward.pool  # the same workers, with a limit of its own
    hostile = "<answer>" * 60_000
    start = time.monotonic()
    results = quick.details(
        [hostile, f"<answer>{row['answer']}</answer>"], metadata=[row["metadata"]] * 2, answer=[row["answer"]] * 2
    )
    assert time.monotonic() - start < 8
    assert [r.score for r in results] == [0.0, 1.0], [r.reason for r in results]
    assert "took over 1 s" in results[0].reason
    quick.close()


def test_metadata_round_trip_keeps_tuples():
    metadata = {"source_dataset": "rearc", "grid": ((1, 2), (3, 4)), "rows": [1, (2, 3)], "text": "×"}
    assert rg.decode_metadata(rg.encode_metadata(metadata)) == metadata
    assert rg.decode_metadata(metadata) == metadata


def test_dataset_rows_are_trl_shaped_and_interleaved():
    rows = rg.dataset({"basic_arithmetic": {"min_terms": 2, "max_terms": 2}, "leg_counting": {}}, size=3, seed=0)
    assert [r["task"] for r in rows] == ["basic_arithmetic", "leg_counting"] * 3
    first = rows[0]
    assert set(first) == {"prompt", "question", "answer", "metadata", "task"}
    assert [m["role"] for m in first["prompt"]] == ["system", "user"]
    assert "<answer>" in first["prompt"][0]["content"] and first["prompt"][1]["content"] == first["question"]
    assert rg.decode_metadata(first["metadata"])["source_dataset"] == "basic_arithmetic"
    no_system = rg.dataset(["leg_counting"], size=1, system_prompt=None)
    assert [m["role"] for m in no_system[0]["prompt"]] == ["user"]
    assert rg.dataset(["leg_counting"], size=2, seed=4) == rg.dataset(["leg_counting"], size=2, seed=4)


def test_pickles_and_refuses_bad_config(reward):
    clone = pickle.loads(pickle.dumps(reward))
    assert clone.config == reward.config
    with pytest.raises(ConfigError, match="timeout_s"):
        get_reward("reasoning_gym", {"timeout_s": 0})
    with pytest.raises(ConfigError, match="metadata_colum"):
        get_reward("reasoning_gym", {"metadata_colum": "meta"})


def test_without_the_extra_it_refuses_with_the_install(monkeypatch):
    from rewardsmith import extras

    monkeypatch.setitem(extras.EXTRA_MODULES, "reasoning-gym", ("rewardsmith_no_such_module",))
    with pytest.raises(ConfigError, match=r"pip install 'rewardsmith\[reasoning-gym\]'"):
        get_reward("reasoning_gym")
    with pytest.raises(ConfigError, match=r"pip install 'rewardsmith\[reasoning-gym\]'"):
        rg.dataset(["leg_counting"], size=1)
