"""Audit sets: procedural generation with verified gold, JSONL import/export, content hash, leakage guard,
and the CALM-style perturbations."""

from __future__ import annotations

import json

import pytest

from rewardsmith.audit.generators import generate_set
from rewardsmith.audit.perturb import PERTURBATIONS, parse_perturbations, perturb
from rewardsmith.audit.verify import summarize, verify_gold
from rewardsmith.heldout.leakage import LeakageWarning, find_leaks
from rewardsmith.heldout.sets import AuditItem, item_from_row, read_set, set_hash, write_set
from rewardsmith.registry import list_rewards


@pytest.mark.parametrize("kind", ["math", "code", "format", "mixed"])
def test_generated_sets_are_balanced_and_reproducible(kind):
    items = generate_set(kind, 24, seed=3)
    assert len(items) == 24 == len({it.id for it in items}) == len({it.prompt for it in items})
    assert sum(it.gold == "a" for it in items) == 12
    assert sum(bool(it.metadata["gold_longer"]) for it in items) == 12
    for it in items:
        longer_is_gold = len(it.gold_response) > len(it.response_b if it.gold == "a" else it.response_a)
        assert longer_is_gold == it.metadata["gold_longer"]
    assert set_hash(generate_set(kind, 24, seed=3)) == set_hash(items)
    assert set_hash(generate_set(kind, 24, seed=4)) != set_hash(items)


def test_mixed_set_covers_every_family():
    items = generate_set("mixed", 30, seed=0)
    assert {it.category for it in items} == {"math", "code", "format"}
    assert {it.check.reward for it in items} >= {"math_equivalence", "code_tests", "think_format"}


def test_unknown_kind_and_bad_size_are_rejected():
    with pytest.raises(ValueError, match="unknown set kind"):
        generate_set("poetry", 3)
    with pytest.raises(ValueError, match="at least 1"):
        generate_set("math", 0)


@pytest.mark.parametrize("kind", ["math", "code", "format"])
def test_rewardsmith_verifiers_confirm_every_generated_gold(kind):
    needed = {"math": "math_equivalence", "code": "code_tests", "format": "json_schema"}[kind]
    if needed not in list_rewards():
        pytest.skip(f"verifier {needed} is not installed")
    items = generate_set(kind, 18, seed=11)
    verdicts = verify_gold(items)
    assert summarize(verdicts) == {"verified": 18, "contradicted": 0, "unverified": 0, "unchecked": 0}
    assert all(v.gold_score > v.wrong_score for v in verdicts)


def test_a_swapped_gold_is_contradicted_and_a_missing_verifier_leaves_it_unverified():
    item = generate_set("format", 1, seed=2)[0]
    swapped = item.model_copy(update={"gold": "b" if item.gold == "a" else "a"})
    unknown = item.model_copy(update={"check": item.check.model_copy(update={"reward": "no_such_verifier"})})
    plain = item.model_copy(update={"check": None})
    statuses = [v.status for v in verify_gold([item, swapped, unknown, plain])]
    assert statuses == ["verified", "contradicted", "unverified", "unchecked"]


def test_jsonl_roundtrip_keeps_items_and_hash(tmp_path):
    items = generate_set("mixed", 9, seed=1)
    digest = write_set(tmp_path / "set.jsonl", items)
    back = read_set(tmp_path / "set.jsonl")
    assert back == items
    assert set_hash(back) == digest == set_hash(list(reversed(items)))  # order-independent identity


@pytest.mark.parametrize(
    ("row", "gold", "a", "b"),
    [
        ({"prompt": "p", "response_a": "x", "response_b": "y", "gold": "A"}, "a", "x", "y"),
        ({"prompt": "p", "response_a": "x", "response_b": "y", "gold": "model_b"}, "b", "x", "y"),
        ({"prompt": "p", "response_a": "x", "response_b": "y", "gold": "tie (bothbad)"}, "tie", "x", "y"),
        (
            {
                "prompt": [{"role": "user", "content": "p"}],
                "response_a": [{"role": "assistant", "content": "x"}],
                "response_b": "y",
                "gold": "b",
            },
            "b",
            "x",
            "y",
        ),
        (
            {
                "question_id": 81,
                "model_a": "m1",
                "model_b": "m2",
                "winner": "model_a",
                "judge": "expert_3",
                "turn": 1,
                "conversation_a": [{"role": "user", "content": "p"}, {"role": "assistant", "content": "x"}],
                "conversation_b": [{"role": "user", "content": "p"}, {"role": "assistant", "content": "y"}],
            },
            "a",
            "x",
            "y",
        ),
    ],
)
def test_import_accepts_native_and_mt_bench_rows(row, gold, a, b):
    item = item_from_row(row)
    assert (item.prompt, item.response_a, item.response_b, item.gold) == ("p", a, b, gold)
    if "model_a" in row:
        assert (item.author_a, item.author_b, item.category) == ("m1", "m2", "mt_bench")


def test_rewardbench_rows_place_the_chosen_response_reproducibly_and_balanced():
    rows = [
        {"prompt": f"question {i}", "chosen": f"good {i}", "rejected": f"bad {i}", "subset": "math-prm"}
        for i in range(40)
    ]
    items = [item_from_row(r) for r in rows]
    assert all(it.gold_response == f"good {i}" for i, it in enumerate(items))
    assert 10 <= sum(it.gold == "a" for it in items) <= 30
    assert [it.gold for it in items] == [item_from_row(r).gold for r in rows]
    assert items[0].category == "math-prm"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"prompt": "p", "response_a": "x", "gold": "a"}', "missing field"),
        ('{"prompt": "p", "response_a": "x", "response_b": "y", "gold": "left"}', "unknown gold label"),
        ("not json", "not JSON"),
        ('{"prompt": 3, "response_a": "x", "response_b": "y", "gold": "a"}', "prompt is not text"),
    ],
)
def test_import_errors_name_the_line(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"prompt": "ok", "response_a": "x", "response_b": "y", "gold": "a"}\n' + line + "\n")
    with pytest.raises(ValueError, match=rf"bad.jsonl:2: .*{message}"):
        read_set(path)


def test_import_rejects_duplicate_ids_and_empty_files(tmp_path):
    row = {"id": "same", "prompt": "p", "response_a": "x", "response_b": "y", "gold": "a"}
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "prompt": "q"}) + "\n")
    with pytest.raises(ValueError, match="duplicate item id"):
        read_set(path)
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ValueError, match="empty"):
        read_set(tmp_path / "empty.jsonl")


# -- leakage ------------------------------------------------------------------------------------------------


def _dpo_rows(items, leaked_idx):
    rows = [{"prompt": "An unrelated instruction about gardening tools.", "chosen": "c", "rejected": "r"}]
    for i in leaked_idx:
        rows.append({"prompt": "Compare the responses.\n\n" + items[i].prompt.upper(), "chosen": "c", "rejected": "r"})
    return rows


def test_leakage_guard_finds_prompts_inside_dpo_jsonl(tmp_path):
    items = generate_set("mixed", 6, seed=0)
    path = tmp_path / "dpo.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _dpo_rows(items, [1, 4])))
    with pytest.warns(LeakageWarning, match=r"2 of 6 prompts of audit set"):
        report = find_leaks(items, path)
    assert report.leaked == [items[1].id, items[4].id]
    assert report.set_hash == set_hash(items)


def test_leakage_guard_reads_parquet_with_conversational_prompts(tmp_path):
    datasets = pytest.importorskip("datasets")
    items = generate_set("math", 4, seed=0)
    rows = [
        {"prompt": [{"role": "user", "content": items[2].prompt}], "chosen": "c", "rejected": "r"},
        {
            "prompt": [{"role": "user", "content": "something else entirely, long enough"}],
            "chosen": "c",
            "rejected": "r",
        },
    ]
    datasets.Dataset.from_list(rows).to_parquet(str(tmp_path / "dpo.parquet"))
    with pytest.warns(LeakageWarning):
        report = find_leaks(items, tmp_path / "dpo.parquet")
    assert report.leaked == [items[2].id]


def test_clean_dpo_data_raises_no_warning(tmp_path, recwarn):
    items = generate_set("format", 5, seed=0)
    path = tmp_path / "dpo.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _dpo_rows(items, [])))
    assert find_leaks(items, path).leaked == []
    assert not [w for w in recwarn if issubclass(w.category, LeakageWarning)]
    with pytest.raises(ValueError, match="no column 'question'"):
        find_leaks(items, path, prompt_column="question")


# -- perturbations --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PERTURBATIONS))
def test_perturbations_keep_the_response_and_add_a_reproducible_cue(name):
    text = "The answer is \\boxed{7}."
    out = perturb(text, name, key="item-1")
    assert text in out and len(out) > len(text) + 20
    assert out == perturb(text, name, key="item-1")


def test_perturbation_templates_vary_across_items_and_names_are_validated():
    outs = {perturb("x", "authority", key=f"item-{i}") for i in range(30)}
    assert len(outs) > 1
    assert parse_perturbations("all") == list(PERTURBATIONS)
    assert parse_perturbations("none") == [] == parse_perturbations("")
    assert parse_perturbations("sentiment, verbosity") == ["verbosity", "sentiment"]
    with pytest.raises(ValueError, match="unknown perturbation"):
        parse_perturbations("verbosity,flattery")


def test_audit_item_reports_gold_and_wrong_slot():
    item = AuditItem(id="i", prompt="p", response_a="x", response_b="y", gold="b")
    assert (item.gold_response, item.wrong_slot) == ("y", "a")
    tie = item.model_copy(update={"gold": "tie"})
    assert (tie.gold_response, tie.wrong_slot) == (None, None)
