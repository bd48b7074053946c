"""Leakage guard across commands: `rewardsmith audit` records its set (hash + prompt fingerprints) in a local
ledger, and `rewardsmith rlaif pairs|revise` warn, and record in summary.json, when their prompts belong to a
audited set. The CLI runs use a real OpenAI-compatible HTTP judge on 127.0.0.1 (tests/support/fault_server.py)."""

from __future__ import annotations

import json

import pytest

from rewardsmith.cli.main import main
from rewardsmith.heldout.leakage import (
    CACHE_ENV,
    audited_sets,
    audited_sets_dir,
    find_audited_set_leaks,
    prompt_fingerprint,
    record_audited_set,
)
from rewardsmith.heldout.sets import AuditItem, set_hash


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """Every test gets its own ledger: nothing is read from or written to the user's cache."""
    path = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(path))
    return path


def audit_item(prompt: str, n: int = 0) -> AuditItem:
    return AuditItem(id=f"t-{n}", prompt=prompt, response_a=f"right {n}", response_b=f"wrong {n}", gold="a")


AUDIT_SET = [
    audit_item("What is the derivative of x**3 at x = 2?", 0),
    audit_item("Write a function that reverses a string.", 1),
    audit_item("Name three prime numbers greater than 50.", 2),
]


def test_ledger_lives_under_the_cache_dir_and_stores_fingerprints_not_prompts(cache_dir):
    path = record_audited_set(AUDIT_SET, name="hand-made")
    assert path == audited_sets_dir() / f"{set_hash(AUDIT_SET)}.json" and path.parent == cache_dir / "audit-sets"
    entry = json.loads(path.read_text())
    assert entry["set_hash"] == set_hash(AUDIT_SET) and entry["n_items"] == 3 and entry["name"] == "hand-made"
    assert entry["fingerprints"] == sorted(prompt_fingerprint(it.prompt) for it in AUDIT_SET)
    assert "derivative" not in path.read_text()
    assert record_audited_set(AUDIT_SET, name="hand-made") == path  # registering again changes nothing
    assert [s.set_hash for s in audited_sets()] == [set_hash(AUDIT_SET)]


# Run prompts -> how many prompts of AUDIT_SET they share (case and whitespace do not matter).
OVERLAP = [
    (["What is the derivative of x**3 at x = 2?"], 1),
    (["  what is the DERIVATIVE of x**3\n at x = 2? "], 1),
    ([[{"role": "system", "content": "Be brief."}, {"role": "user", "content": AUDIT_SET[2].prompt}]], 1),
    (["Name three prime numbers greater than 50.", "Write a function that reverses a string.", "unrelated"], 2),
    (["What is the derivative of x**3 at x = 3?"], 0),  # a different prompt
    (["Please answer: What is the derivative of x**3 at x = 2?"], 0),  # fingerprints match whole prompts only
    ([], 0),
]  # fmt: skip


@pytest.mark.parametrize(("prompts", "expected"), OVERLAP)
def test_overlap_table(prompts, expected):
    record_audited_set(AUDIT_SET, name="hand-made")
    leaks = find_audited_set_leaks(prompts)
    if not expected:
        assert leaks == []
        return
    (leak,) = leaks
    assert (leak.set_hash, leak.name, leak.n_overlap) == (set_hash(AUDIT_SET), "hand-made", expected)
    assert 1 <= len(leak.examples) <= expected
    assert f"{expected} prompt(s) of audit set {set_hash(AUDIT_SET)[:12]} (hand-made)" in leak.message()


def test_each_audited_set_is_reported_separately():
    other = [audit_item("Write a function that reverses a string.", 7), audit_item("Sort a list in place.", 8)]
    record_audited_set(AUDIT_SET)
    record_audited_set(other)
    leaks = find_audited_set_leaks(["write a function that reverses a string.", "Sort a list in place."])
    assert sorted((leak.set_hash, leak.n_overlap) for leak in leaks) == sorted(
        [(set_hash(AUDIT_SET), 1), (set_hash(other), 2)]
    )


def test_a_ledger_that_cannot_be_written_or_read_never_raises(cache_dir, caplog):
    cache_dir.parent.mkdir(parents=True, exist_ok=True)
    cache_dir.write_text("a file where the ledger folder should be")
    assert record_audited_set(AUDIT_SET) is None
    assert "could not record audit set" in caplog.text
    assert find_audited_set_leaks(["What is the derivative of x**3 at x = 2?"]) == []
    cache_dir.unlink()
    record_audited_set(AUDIT_SET)
    (audited_sets_dir() / "broken.json").write_text("{not json")
    assert [leak.n_overlap for leak in find_audited_set_leaks(["Write a function that reverses a string."])] == [1]
    assert "skipping unreadable audited-set ledger entry" in caplog.text


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def audit(fault_server, tmp_path, capsys):
    """A real `rewardsmith audit` run (judge: the HTTP endpoint); returns its set.jsonl rows and set hash."""
    out = tmp_path / "audit-run"
    argv = ["audit", "run", "--judge", "openai:fault-judge", "--judge-base-url", fault_server.base_url,
            "--judge-api-key", "x",
            "--set", "math", "--n", "3", "--perturb", "none", "--n-boot", "50", "--out", str(out),
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    rows = [json.loads(line) for line in (out / "set.jsonl").read_text().splitlines()]
    return rows, json.loads((out / "run.json").read_text())["set_hash"]


def pairs(fault_server, data, out, capsys):
    argv = ["rlaif", "pairs", "--data", str(data), "--out", str(out), "--judge", "openai:fault-judge",
            "--judge-base-url", fault_server.base_url, "--no-progress"]  # fmt: skip
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err, json.loads((out / "summary.json").read_text())


def test_an_audit_run_registers_its_set_and_rlaif_pairs_warns_on_its_prompts(fault_server, tmp_path, capsys):
    audit_rows, digest = audit(fault_server, tmp_path, capsys)
    assert [entry.set_hash for entry in audited_sets()] == [digest]

    leaked_prompt = audit_rows[1]["prompt"]
    data = write_jsonl(
        tmp_path / "prompts.jsonl",
        [
            {"prompt": "Tell me a fact about owls.", "responses": ["Owls hunt at night.", "Owls are fish."]},
            {"prompt": "  " + leaked_prompt.upper() + "\n", "responses": ["One answer.", "Another answer."]},
        ],
    )
    code, _, err, summary = pairs(fault_server, data, tmp_path / "leaky", capsys)
    assert code == 0
    assert f"WARNING: 1 prompt(s) of audit set {digest[:12]}" in err and "no longer held out" in err
    (leak,) = summary["leakage"]
    assert leak["set_hash"] == digest and leak["n_overlap"] == 1
    shown = " ".join(leaked_prompt.upper().split())
    assert leak["examples"] == [shown if len(shown) <= 120 else shown[:117] + "..."]

    clean = write_jsonl(tmp_path / "clean.jsonl", [{"prompt": "Tell me a fact about owls.", "responses": ["a", "b"]}])
    code, _, err, summary = pairs(fault_server, clean, tmp_path / "clean", capsys)
    assert code == 0 and "WARNING" not in err and summary["leakage"] == []


def test_rlaif_revise_checks_its_prompts_too(fault_server, tmp_path, capsys):
    record_audited_set(AUDIT_SET, name="hand-made")
    data = write_jsonl(
        tmp_path / "responses.jsonl",
        [{"prompt": "Write a function that reverses a string.", "response": "def f(s): return s"}],
    )
    out = tmp_path / "revise"
    argv = ["rlaif", "revise", "--data", str(data), "--out", str(out), "--reviser", "openai:fault-model",
            "--reviser-base-url", fault_server.base_url, "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"WARNING: 1 prompt(s) of audit set {set_hash(AUDIT_SET)[:12]} (hand-made)" in err
    summary = json.loads((out / "summary.json").read_text())
    assert [(leak["set_hash"], leak["n_overlap"]) for leak in summary["leakage"]] == [(set_hash(AUDIT_SET), 1)]


def test_one_unpairable_row_no_longer_stops_a_cli_run(fault_server, tmp_path, capsys):
    data = write_jsonl(
        tmp_path / "prompts.jsonl",
        [
            {"prompt": "What is 2 + 2?", "responses": ["It is 4.", "It is 4."]},
            {"prompt": "What is 3 + 3?", "responses": ["It is 6.", "It is 7."]},
            {"prompt": "What is 4 + 4?", "responses": ["It is 8."]},
        ],
    )
    out = tmp_path / "out"
    code, stdout, err, summary = pairs(fault_server, data, out, capsys)
    assert code == 0
    assert "2 of 3 prompt(s) have fewer than two distinct non-empty candidates" in err
    assert summary["prompts_dropped"] == {"fewer_than_two_distinct_candidates": 2} and summary["pairs_total"] == 1
    dropped = [json.loads(line) for line in (out / "dropped.jsonl").read_text().splitlines()]
    by_prompt = {row["prompt"]: row["reason"] for row in dropped}
    assert by_prompt["What is 2 + 2?"] == by_prompt["What is 4 + 4?"] == "fewer_than_two_distinct_candidates"
    assert by_prompt["What is 3 + 3?"] == "tie"  # the endpoint always answers "A": a pure position preference
    assert "prompts dropped before judging (see dropped.jsonl): fewer_than_two_distinct_candidates 2" in stdout

    requests = len(fault_server.requests)
    code, stdout, _, summary = pairs(fault_server, data, out, capsys)
    assert code == 0 and len(fault_server.requests) == requests  # resumed: nothing judged again
    assert summary["resumed"] == 3 and summary["prompts_dropped"] == {"fewer_than_two_distinct_candidates": 2}
    assert len((out / "state" / "pairs.jsonl").read_text().splitlines()) == 3
