"""Preference-pair pipeline logic with a scripted judge (deterministic verdicts through the real
``combine_orders``): ties, abstains, margin, ensembling, the chain-of-thought clamp, failures, the
store and the export. The real embedded judge is exercised in ``test_rlaif_embedded.py``."""

from __future__ import annotations

import json

import pytest
from datasets import load_dataset

from rewardsmith.constitutions.loader import constitution_hash, load_constitution, parse_text
from rewardsmith.constitutions.pairs import (
    UNPAIRABLE,
    PairsConfig,
    PairsPipeline,
    check_fingerprint,
    clamp_verdict,
    export_pairs,
    pair_tasks,
    planned_keys,
    sample_principles,
)
from rewardsmith.constitutions.prompts import PromptItem, read_prompt_items
from rewardsmith.judges.base import OrderVerdict, PairwiseJudgeProtocol, PairwiseVerdict
from rewardsmith.judges.pairwise import combine_orders
from rewardsmith.store import KeyedStore

CONSTITUTION = parse_text(
    """
name: scripted
description: Three principles whose questions the scripted judge recognises.
principles:
  - {id: p-one, comparison: "QUESTION ONE: which is better?", critique: "Critique one.", revision: "Revision one."}
  - {id: p-two, comparison: "QUESTION TWO: which is better?", critique: "Critique two.", revision: "Revision two."}
  - {id: p-three, comparison: "QUESTION THREE: which?", critique: "Critique three.", revision: "Revision three."}
""",
    "inline",
)


def order(p_first):
    if p_first == "error":
        return OrderVerdict(source="error", reason="HTTP 503 after 4 retries")
    if p_first is None:
        return OrderVerdict(source="abstain", reason="no verdict in answer")
    return OrderVerdict(
        prob_first=p_first, choice="first" if p_first > 0.5 else "second" if p_first < 0.5 else None, source="logprobs"
    )


class ScriptedJudge:
    """``script(prompt, first, second, question) -> P(first better) | None | "error"``, asked in both orders."""

    model = "scripted-judge"

    def __init__(self, script):
        self.script = script
        self.calls: list[tuple[str, str, str, str | None]] = []

    def judge(self, prompt, response_a, response_b, *, question=None) -> PairwiseVerdict:
        self.calls.append((prompt, response_a, response_b, question))
        ab = order(self.script(prompt, response_a, response_b, question))
        ba = order(self.script(prompt, response_b, response_a, question))
        return combine_orders(ab, ba, principle=question, model=self.model)

    async def ajudge(self, prompt, response_a, response_b, *, question=None) -> PairwiseVerdict:
        return self.judge(prompt, response_a, response_b, question=question)


def prefers(text):
    """A consistent judge: the response containing ``text`` wins with 0.9 in either position."""
    return lambda prompt, first, second, question: 0.9 if text in first else 0.1 if text in second else 0.5


def item(index, prompt, *candidates, reference=None):
    return PromptItem(
        index=index, prompt_id=f"p{index}", prompt=prompt, candidates=tuple(candidates), reference=reference
    )


def run(tmp_path, judge, items, **config):
    pipeline = PairsPipeline(judge, CONSTITUTION, PairsConfig(**config))
    with KeyedStore(tmp_path / "state" / "pairs.jsonl") as store:
        summary = pipeline.run(items, store)
        written = export_pairs(store, tmp_path, ("jsonl", "parquet"))
    rows = [json.loads(line) for line in written["jsonl"].read_text().splitlines()]
    dropped = [json.loads(line) for line in written["dropped"].read_text().splitlines()]
    return summary, rows, dropped


def test_scripted_judge_satisfies_the_protocol():
    assert isinstance(ScriptedJudge(prefers("good")), PairwiseJudgeProtocol)


def test_chosen_is_the_preferred_response_in_either_input_order(tmp_path):
    items = [item(0, "q0", "good answer", "bad answer"), item(1, "q1", "bad answer", "good answer")]
    summary, rows, dropped = run(tmp_path, ScriptedJudge(prefers("good")), items)
    assert summary.kept == 2 and not dropped
    assert [r["chosen"] for r in rows] == ["good answer", "good answer"]
    assert [r["rejected"] for r in rows] == ["bad answer", "bad answer"]
    for row in rows:
        assert row["prob_chosen"] == pytest.approx(0.9)
        assert row["prob_chosen_shown_first"] == [pytest.approx(0.9)]
        assert row["prob_chosen_shown_second"] == [pytest.approx(0.9)]
        assert row["flip"] is False
        assert row["judge_model"] == "scripted-judge"
        assert row["constitution"] == "scripted"
        assert row["constitution_hash"] == constitution_hash(CONSTITUTION)
        assert len(row["principles"]) == 1


def test_all_pairs_of_k_candidates_are_compared(tmp_path):
    # Scores by length: the longest wins every comparison it is in.
    judge = ScriptedJudge(lambda p, first, second, q: 0.8 if len(first) > len(second) else 0.2)
    _, rows, _ = run(tmp_path, judge, [item(0, "q", "a", "bbb", "cc", "dddd")])
    assert len(rows) == 6
    assert {(r["chosen"], r["rejected"]) for r in rows} == {
        ("bbb", "a"),
        ("cc", "a"),
        ("dddd", "a"),
        ("bbb", "cc"),
        ("dddd", "bbb"),
        ("dddd", "cc"),
    }


# Verdict table: (P(first better) in order AB, same in order BA) -> expected outcome with margin 0.1.
# Order BA shows response_b first, so a judge that prefers position A says 0.9 in both orders.
OUTCOMES = [
    ((0.9, 0.1), "a"),  # consistent preference for a
    ((0.2, 0.8), "b"),  # consistent preference for b
    ((0.9, 0.9), "tie"),  # always picks the first position: averages to 0.5
    ((0.7, 0.6), "tie"),  # P(a) = (0.7 + 0.4) / 2 = 0.55: inside the margin
    ((0.75, 0.4), "a"),  # P(a) = 0.675: outside the margin although the margin is not tiny
    ((0.5, 0.5), "tie"),  # no preference at all
    ((None, 0.1), "abstain"),  # one order unparsable -> abstain (both orders required)
    ((None, None), "abstain"),
]


@pytest.mark.parametrize(("orders", "expected"), OUTCOMES)
def test_outcome_table(tmp_path, orders, expected):
    ab, ba = orders
    judge = ScriptedJudge(lambda p, first, second, q: ab if first == "resp-a" else ba)
    summary, rows, dropped = run(tmp_path, judge, [item(0, "q", "resp-a", "resp-b")], margin=0.1)
    if expected in ("a", "b"):
        assert len(rows) == 1 and not dropped
        assert rows[0]["chosen"] == f"resp-{expected}"
        assert rows[0]["rejected"] != rows[0]["chosen"]
    else:
        assert not rows and len(dropped) == 1
        assert dropped[0]["reason"].split(":")[0] == expected
        assert summary.dropped == {expected: 1}
        assert dropped[0]["abstained"] is (expected == "abstain")


def test_margin_zero_drops_only_exact_ties(tmp_path):
    judge = ScriptedJudge(lambda p, first, second, q: {"x": 0.52, "y": 0.5}[first[0]] if first[0] in "xy" else 0.5)
    items = [item(0, "q0", "x1", "other"), item(1, "q1", "y1", "other")]
    _, rows, dropped = run(tmp_path, judge, items, margin=0.0)
    assert [r["chosen"] for r in rows] == ["x1"]
    assert [d["reason"] for d in dropped] == ["tie"]


def test_identical_and_empty_candidates_never_become_pairs(tmp_path):
    judge = ScriptedJudge(prefers("good"))
    items = [item(0, "q0", "good", "bad", "  "), item(1, "q1", "good", "bad", "bad "), item(2, "q2", "good", "good")]
    _, rows, dropped = run(tmp_path, judge, items)
    assert [(r["chosen"], r["rejected"]) for r in rows] == [("good", "bad"), ("good", "bad"), ("good", "bad ")]
    assert sorted(d["reason"] for d in dropped) == sorted(["empty", "empty", "identical", UNPAIRABLE])
    assert len(judge.calls) == 3  # only the three real pairs reach the judge
    assert all(r["chosen"] != r["rejected"] for r in rows)


# Prompts that cannot make one pair: (candidates, why). Each is dropped as a whole; the run goes on.
UNPAIRABLE_ROWS = [
    (("It is 4.", "It is 4."), "identical candidates"),
    (("It is 4.", "  It is 4. "), "identical up to whitespace"),
    (("only one",), "a single candidate"),
    (("answer", "   "), "one candidate is empty"),
    (("", ""), "only empty candidates"),
    ((), "no candidates"),
]


def test_prompts_without_two_distinct_candidates_are_dropped_and_the_run_goes_on(tmp_path):
    from rewardsmith.constitutions.progress import RunProgress

    bad = [item(i + 1, f"bad {i}", *candidates) for i, (candidates, _) in enumerate(UNPAIRABLE_ROWS)]
    items = [item(0, "q0", "good", "bad"), *bad, item(len(bad) + 1, "q-last", "bad", "good")]
    judge = ScriptedJudge(prefers("good"))
    pipeline = PairsPipeline(judge, CONSTITUTION, PairsConfig())
    progress = RunProgress(len(items), "test", enabled=False)
    with KeyedStore(tmp_path / "state" / "pairs.jsonl") as store:
        summary = pipeline.run(items, store, progress)
        written = export_pairs(store, tmp_path, ("jsonl",), keys=planned_keys(items, PairsConfig()))
    rows = [json.loads(line) for line in written["jsonl"].read_text().splitlines()]
    dropped = [json.loads(line) for line in written["dropped"].read_text().splitlines()]
    assert [r["prompt"] for r in rows] == ["q0", "q-last"] and summary.kept == 2
    assert [d["prompt"] for d in dropped] == [b.prompt for b in bad]  # input order
    for row, (candidates, why) in zip(dropped, UNPAIRABLE_ROWS, strict=True):
        assert row["reason"] == UNPAIRABLE, why
        assert row["candidates"] == list(candidates), why
        assert row["response_a"] is None and row["prob_a"] is None
    assert summary.prompts_dropped == {UNPAIRABLE: len(bad)} and summary.dropped == {}
    assert summary.pairs_total == 2 and summary.failed == 0
    assert progress.counts["dropped"] == len(bad) and progress.counts["done"] == 2
    assert f"prompts dropped before judging (see dropped.jsonl): {UNPAIRABLE} {len(bad)}" in summary.describe()
    assert {call[0] for call in judge.calls} == {"q0", "q-last"}


def test_dropped_prompts_are_keyed_and_not_recorded_twice_on_resume(tmp_path):
    items = [item(0, "q0", "good", "bad"), item(1, "q1", "It is 4.", "It is 4.")]
    run(tmp_path, ScriptedJudge(prefers("good")), items)
    again = ScriptedJudge(prefers("good"))
    summary, rows, dropped = run(tmp_path, again, items)
    assert again.calls == [] and summary.resumed == 2
    assert summary.prompts_dropped == {UNPAIRABLE: 1} and len(rows) == len(dropped) == 1
    lines = (tmp_path / "state" / "pairs.jsonl").read_text().splitlines()
    assert len(lines) == len({json.loads(line)["key"] for line in lines}) == 2


# Verdict table: P(a better) of a kept pair -> counted as low-confidence (|P - 0.5| < 0.05)?
CONFIDENCE = [(0.502, True), (0.498, True), (0.549, True), (0.451, True), (0.56, False), (0.3, False), (0.9, False)]


@pytest.mark.parametrize(("prob_a", "low"), CONFIDENCE)
def test_low_confidence_kept_pairs_are_counted(tmp_path, prob_a, low):
    judge = ScriptedJudge(lambda p, first, second, q: prob_a if first == "resp-a" else 1 - prob_a)
    summary, rows, _ = run(tmp_path, judge, [item(0, "q", "resp-a", "resp-b")])
    assert summary.kept == 1 and rows[0]["prob_chosen"] == pytest.approx(max(prob_a, 1 - prob_a))
    assert summary.low_confidence_kept == int(low)
    assert f"low-confidence kept pairs (|P - 0.5| < 0.05): {int(low)}/1" in summary.describe()
    assert ("--margin 0.05 drops them" in summary.describe()) is low


def test_coin_flip_pairs_kept_by_the_default_margin_are_reported_next_to_the_flips(tmp_path):
    # Position-biased judge: each order picks the first slot, resp-a a hair more often -> P(a) = 0.502, flipped.
    judge = ScriptedJudge(lambda p, first, second, q: 0.9 if first == "resp-a" else 0.896)
    items = [item(i, f"q{i}", "resp-a", "resp-b") for i in range(3)]
    summary, rows, _ = run(tmp_path, judge, items)
    assert [r["prob_chosen"] for r in rows] == [pytest.approx(0.502)] * 3 and all(r["flip"] for r in rows)
    assert summary.low_confidence_kept == 3
    lines = summary.describe().splitlines()
    flips = next(i for i, line in enumerate(lines) if line.startswith("position flips: 3/3"))
    assert lines[flips + 1].startswith("low-confidence kept pairs (|P - 0.5| < 0.05): 3/3 (100%)")
    summary, rows, dropped = run(tmp_path / "margin", judge, items, margin=0.05)
    assert not rows and summary.low_confidence_kept == 0 and {d["reason"] for d in dropped} == {"tie"}


def test_flipped_pairs_are_kept_by_default_and_dropped_on_request(tmp_path):
    # Position-biased but slightly content-aware: 0.95 for 'good' first, 0.7 for 'bad' first.
    judge = ScriptedJudge(lambda p, first, second, q: 0.95 if first == "good" else 0.7)
    summary, rows, _ = run(tmp_path / "keep", judge, [item(0, "q", "good", "bad")])
    assert rows[0]["chosen"] == "good" and rows[0]["flip"] is True
    assert rows[0]["prob_chosen"] == pytest.approx((0.95 + 0.3) / 2)
    assert rows[0]["prob_chosen_shown_first"] == [pytest.approx(0.95)]
    assert rows[0]["prob_chosen_shown_second"] == [pytest.approx(0.3)]
    assert summary.flipped == 1
    summary, rows, dropped = run(tmp_path / "drop", judge, [item(0, "q", "good", "bad")], drop_flipped=True)
    assert not rows and dropped[0]["reason"] == "flipped"


def test_ensembling_averages_principles_and_skips_abstaining_ones(tmp_path):
    votes = {"QUESTION ONE": 0.9, "QUESTION TWO": 0.3, "QUESTION THREE": None}

    def script(prompt, first, second, question):
        p = votes[question.split(":")[0]]
        if p is None:
            return None
        return p if first == "resp-a" else 1 - p

    _, rows, _ = run(tmp_path, ScriptedJudge(script), [item(0, "q", "resp-a", "resp-b")], principles_per_comparison=3)
    row = rows[0]
    assert sorted(row["principles"]) == ["p-one", "p-three", "p-two"]
    assert row["abstained_principles"] == ["p-three"]
    assert row["chosen"] == "resp-a"
    assert row["prob_chosen"] == pytest.approx((0.9 + 0.3) / 2)


def test_ensemble_where_every_principle_abstains_is_an_abstain(tmp_path):
    summary, rows, dropped = run(
        tmp_path, ScriptedJudge(lambda *a: None), [item(0, "q", "a", "b")], principles_per_comparison=2
    )
    assert not rows and dropped[0]["abstained"] is True
    assert summary.dropped == {"abstain": 1}


def test_chain_of_thought_labels_are_clamped_before_averaging(tmp_path):
    # CoT labels collapse to 0/1; clamped to 0.4/0.6 a consistent verdict becomes 0.6.
    judge = ScriptedJudge(lambda p, first, second, q: 1.0 if first == "good" else 0.0)
    _, rows, _ = run(tmp_path / "cot", judge, [item(0, "q", "good", "bad")], chain_of_thought=True)
    assert rows[0]["prob_chosen"] == pytest.approx(0.6)
    assert rows[0]["prob_chosen_shown_first"] == [pytest.approx(0.6)]
    _, rows, dropped = run(
        tmp_path / "cot-margin", judge, [item(0, "q", "good", "bad")], chain_of_thought=True, margin=0.1
    )
    assert not rows and dropped[0]["reason"] == "tie"  # |0.6 - 0.5| is not more than 0.1
    _, rows, _ = run(tmp_path / "plain", judge, [item(0, "q", "good", "bad")])
    assert rows[0]["prob_chosen"] == pytest.approx(1.0)


def test_clamp_verdict_table():
    verdict = combine_orders(order(1.0), order(1.0))  # position bias: each order picks the first
    assert clamp_verdict(verdict, 0.4, 0.6).prob_a == pytest.approx(0.5)
    verdict = combine_orders(order(1.0), order(0.0))
    clamped = clamp_verdict(verdict, 0.3, 0.7)
    assert (clamped.prob_a, clamped.ab.prob_first, clamped.ba.prob_first) == (pytest.approx(0.7), 0.7, 0.3)
    abstained = combine_orders(order(None), order(0.0))
    assert clamp_verdict(abstained, 0.4, 0.6).prob_a is None


def test_judge_endpoint_failures_are_not_recorded_and_are_retried(tmp_path):
    broken = ScriptedJudge(
        lambda p, first, second, q: "error" if "flaky" in (first + second) else (0.9 if first == "good" else 0.1)
    )
    items = [item(0, "q0", "good", "bad"), item(1, "q1", "good", "flaky")]
    summary, rows, dropped = run(tmp_path, broken, items)
    assert summary.failed == 1 and summary.kept == 1 and not dropped
    assert "FAILED" in summary.describe()
    healed = ScriptedJudge(prefers("good"))
    summary, rows, dropped = run(tmp_path, healed, items)
    assert summary.failed == 0 and summary.resumed == 1 and summary.kept == 2
    assert [r["chosen"] for r in rows] == ["good", "good"]
    assert len(healed.calls) == 1  # only the failed pair was asked again


def test_rerun_asks_nothing_and_duplicates_nothing(tmp_path):
    items = [item(i, f"q{i}", "good", f"bad {i}") for i in range(5)]
    first = ScriptedJudge(prefers("good"))
    run(tmp_path, first, items)
    second = ScriptedJudge(prefers("good"))
    summary, rows, _ = run(tmp_path, second, items)
    assert second.calls == [] and summary.resumed == 5
    assert len(rows) == 5 and len({r["key"] for r in rows}) == 5
    assert len((tmp_path / "state" / "pairs.jsonl").read_text().splitlines()) == 5


def test_principle_sampling_is_seeded_per_pair_and_covers_the_constitution():
    tasks = pair_tasks([item(i, f"prompt {i}", "a", "b") for i in range(60)], PairsConfig())
    picks = [sample_principles(CONSTITUTION, t.key, 0, 1)[0].id for t in tasks]
    assert picks == [sample_principles(CONSTITUTION, t.key, 0, 1)[0].id for t in tasks]
    assert set(picks) == {"p-one", "p-two", "p-three"}
    assert picks != [sample_principles(CONSTITUTION, t.key, 1, 1)[0].id for t in tasks]
    two = sample_principles(CONSTITUTION, tasks[0].key, 0, 2)
    assert len({p.id for p in two}) == 2
    assert len(sample_principles(CONSTITUTION, tasks[0].key, 0, 10)) == 3


def test_max_pairs_per_prompt_samples_a_stable_subset():
    items = [item(0, "q", *"abcdef")]
    subset = pair_tasks(items, PairsConfig(max_pairs_per_prompt=4))
    assert len(subset) == 4 and len(pair_tasks(items, PairsConfig())) == 15
    assert [t.key for t in subset] == [t.key for t in pair_tasks(items, PairsConfig(max_pairs_per_prompt=4))]


def test_conversational_output_and_datasets_roundtrip(tmp_path):
    items = [item(0, [{"role": "user", "content": "hi?"}], "good", "bad"), item(1, "plain?", "bad", "good")]
    run(tmp_path, ScriptedJudge(prefers("good")), items, conversational=True)
    for fmt in ("json", "parquet"):
        ds = load_dataset(fmt, data_files=str(tmp_path / f"train.{'jsonl' if fmt == 'json' else fmt}"), split="train")
        assert ds.num_rows == 2
        assert ds[0]["prompt"] == [{"role": "user", "content": "hi?"}]
        assert ds[1]["prompt"] == [{"role": "user", "content": "plain?"}]
        assert ds[0]["chosen"] == [{"role": "assistant", "content": "good"}]
        assert ds[0]["rejected"] == [{"role": "assistant", "content": "bad"}]


def test_reference_agreement_and_flip_rate_are_reported(tmp_path):
    items = [item(0, "q0", "good", "bad", reference="good"), item(1, "q1", "bad", "good", reference="bad")]
    summary, _, _ = run(tmp_path, ScriptedJudge(prefers("good")), items)
    assert (summary.reference_pairs, summary.reference_agreed) == (2, 1)
    assert "agreement with the data's 'better' marks: 1/2" in summary.describe()


def test_reading_prompt_files(tmp_path):
    path = tmp_path / "in.jsonl"
    rows = [
        {"prompt": "p0", "responses": ["x", "y"], "better": 1},
        {"prompt": [{"role": "user", "content": "p1"}], "responses": [[{"role": "assistant", "content": "z"}], "w"]},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    items = read_prompt_items(path)
    assert items[0].candidates == ("x", "y") and items[0].reference == "y"
    assert items[1].text == "p1" and items[1].candidates == ("z", "w") and items[1].reference is None
    with pytest.raises(ValueError, match="no prompt column 'question'"):
        read_prompt_items(path, prompt_column="question")


def test_resuming_with_other_settings_is_refused(tmp_path):
    pipeline = PairsPipeline(ScriptedJudge(prefers("x")), CONSTITUTION, PairsConfig())
    check_fingerprint(tmp_path / "state", pipeline.fingerprint())
    check_fingerprint(tmp_path / "state", pipeline.fingerprint())
    other = PairsPipeline(ScriptedJudge(prefers("x")), load_constitution("honest-concise"), PairsConfig())
    with pytest.raises(ValueError, match=r"different settings.*constitution"):
        check_fingerprint(tmp_path / "state", other.fingerprint())
    with pytest.raises(ValueError, match="margin"):
        PairsConfig(margin=0.5)
    with pytest.raises(ValueError, match="cot_clamp"):
        PairsConfig(cot_clamp=(0.6, 0.4))


def test_a_judge_that_changed_method_is_refused_and_a_run_recorded_before_the_method_resumes(tmp_path):
    """The embedded client's default judge became the likelihood judge under the same model name: the recorded
    method tells it from the letter judge. A record without the method (older runs) is compared without it."""
    from rewardsmith.judges.clients.factory import make_client
    from rewardsmith.judges.pairwise import PairwiseJudge
    from rewardsmith.judges.pointwise import LikelihoodJudge

    client = make_client("openai", model="same-model", base_url="http://127.0.0.1:9/v1")
    runs = {
        judge.method: PairsPipeline(judge, CONSTITUTION, PairsConfig())
        for judge in (PairwiseJudge(client), LikelihoodJudge(client))
    }
    letter, likelihood = runs["pairwise"].fingerprint(), runs["likelihood"].fingerprint()
    assert letter["judge_model"] == likelihood["judge_model"]
    assert likelihood["judge_settings"] == {"method": "likelihood"}
    assert letter["judge_settings"] == {
        "method": "pairwise", "template": "pairwise", "use_logprobs": True, "chain_of_thought": False,
        "cot_clamp": [0.4, 0.6],
    }  # fmt: skip
    for fingerprint, other in ((letter, likelihood), (likelihood, letter)):
        state = tmp_path / fingerprint["judge_settings"]["method"] / "state"
        check_fingerprint(state, fingerprint)
        with pytest.raises(ValueError, match=r"different settings \(judge_settings\)"):
            check_fingerprint(state, other)
        older = json.loads((state / "run.json").read_text())
        del older["judge_settings"]["method"]
        (state / "run.json").write_text(json.dumps(older))
        with pytest.raises(ValueError, match=r"different settings \(judge_settings\)"):
            check_fingerprint(state, other)
        check_fingerprint(state, fingerprint)  # the same judge resumes, and the record gains the method
        assert json.loads((state / "run.json").read_text()) == fingerprint


def test_store_cuts_a_torn_last_line_and_never_duplicates(tmp_path):
    path = tmp_path / "s.jsonl"
    with KeyedStore(path) as store:
        assert store.append("k1", {"v": 1})
        assert not store.append("k1", {"v": 2})
    with path.open("a") as fh:
        fh.write('{"key": "k2", "v": ')  # a write cut short by SIGKILL
    with KeyedStore(path) as store:
        assert len(store) == 1 and "k2" not in store
        assert store.append("k2", {"v": 2})
    lines = path.read_text().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["k1", "k2"]
    path.write_text('{"key": "k1"}\nnot json\n')
    with pytest.raises(ValueError, match=r"s.jsonl:2: corrupt record"):
        KeyedStore(path)


def test_export_holds_only_the_current_inputs_pairs(tmp_path):
    items = [item(i, f"q{i}", "good", f"bad {i}") for i in range(4)]
    run(tmp_path, ScriptedJudge(prefers("good")), items)
    subset = items[1:3]
    with KeyedStore(tmp_path / "state" / "pairs.jsonl") as store:
        written = export_pairs(
            store, tmp_path / "subset", ("jsonl",), keys={t.key for t in pair_tasks(subset, PairsConfig())}
        )
    rows = [json.loads(line) for line in written["jsonl"].read_text().splitlines()]
    assert [r["prompt"] for r in rows] == ["q1", "q2"]
