"""The bundled samples are addressable from any directory: ``samples:NAME`` wherever a data or YAML file is read."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rewardsmith.adapters.spec import load_spec
from rewardsmith.data import read_records
from rewardsmith.sample_files import SAMPLES_DIR, sample_names, sample_path
from rewardsmith.spec_files import read_spec_file


def rewardsmith_cli(*argv: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rewardsmith", *argv], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_every_bundled_file_has_a_name_and_resolves_to_it():
    names = sample_names()
    assert {"scoring_demo.jsonl", "hack_math_rows.jsonl", "hack_weak_spec.yaml"} <= set(names)
    assert all(sample_path(f"samples:{n}") == SAMPLES_DIR / n for n in names)


@pytest.mark.parametrize("name", ["nope.jsonl", "../reward.py", "", "samples/scoring_demo.jsonl"])
def test_an_unknown_name_lists_the_names_and_never_leaves_the_folder(name):
    with pytest.raises(FileNotFoundError, match=r"no bundled sample.*samples:scoring_demo\.jsonl"):
        sample_path(f"samples:{name}")


def test_a_plain_path_stays_a_path(tmp_path):
    assert sample_path(tmp_path / "rows.jsonl") == tmp_path / "rows.jsonl"
    assert sample_path("rows.jsonl").name == "rows.jsonl"


def test_the_readers_take_a_sample_from_another_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = read_records("samples:scoring_demo.jsonl")
    assert len(rows) == 30 and {"prompt", "completion", "solution"} <= rows[0].keys()
    assert read_spec_file("samples:hack_math_spec.yaml") == {"rewards": [{"name": "math_equivalence"}]}
    assert load_spec("samples:hack_weak_spec.yaml").rewards[0].name == "regex_match"


def test_the_cli_lists_and_reads_samples_from_a_fresh_directory(tmp_path):
    listed = rewardsmith_cli("samples", cwd=tmp_path)
    assert listed.returncode == 0 and "samples:hack_math_rows.jsonl" in listed.stdout.splitlines()
    scored = rewardsmith_cli(
        "score", "--reward", "think_format", "--data", "samples:scoring_demo.jsonl", "--out", "s.jsonl", cwd=tmp_path
    )
    assert scored.returncode == 0, scored.stderr
    assert "30 samples: 30 scored" in scored.stdout + scored.stderr and (tmp_path / "s.jsonl").is_file()
    unknown = rewardsmith_cli("score", "--reward", "think_format", "--data", "samples:nope", "--out", "x", cwd=tmp_path)
    assert unknown.returncode == 2
    assert unknown.stderr.strip().splitlines() == [
        "rewardsmith: error: no bundled sample 'nope': use one of " + ", ".join(f"samples:{n}" for n in sample_names())
    ]
