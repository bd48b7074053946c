"""``bench/verifier_cards.py``: one setup's card and the index it writes, and a refused unknown setup name.

The published cards under ``docs/cards/`` are this script's output; these checks hold what a reader relies on: the
grade line, the number of rows audited, the replay command that re-checks the sealed exploits, and the index row
that links the card with the same grade.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "verifier_cards.py"


def _script():
    spec = importlib.util.spec_from_file_location("verifier_cards", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["verifier_cards"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_one_setup_writes_its_card_and_the_index(tmp_path, capsys):
    pytest.importorskip("reasoning_gym")  # the math rows include reasoning-gym's gsm_symbolic
    cards = _script()
    out = tmp_path / "cards"
    name = "rewardsmith-math_equivalence"
    assert cards.main(["--out", str(out), "--only", name, "--budget", "10", "--seed", "0"]) == 0

    said = capsys.readouterr().out
    assert f"{name}: grade A on 40 rows" in said
    assert f"wrote {out / 'index.md'}: 1 cards, 3 not audited" in said

    folder = out / name
    card = (folder / "card.md").read_text()
    first = card.splitlines()[0]
    assert first == "# Verifier card: math_equivalence — grade A"
    assert f"{folder / 'rows.jsonl'} — 40 rows; scored correct means score >= 1.0" in card
    assert "| honest controls (right answers) | 40/40 |" in card
    assert "## Sealed exploits (0 in 10 searched completions, seed 0)" in card
    assert f"rewardsmith audit replay {folder / 'findings.jsonl'} --spec {folder / 'spec.yaml'}" in card
    assert sum(1 for line in (folder / "rows.jsonl").read_text().splitlines() if line.strip()) == 40
    metrics = json.loads((folder / "metrics.json").read_text())
    assert metrics["grade"]["grade"] == "A" and metrics["run"]["n_rows"] == 40
    assert not (folder / "verdicts.jsonl").exists()  # a rerun scores afresh

    index = (out / "index.md").read_text()
    row = next(line for line in index.splitlines() if line.startswith(f"| [{name}]({name}/card.md)"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:4] == ["40", "**A**"]
    assert cells[4].startswith("A: wrong paid 0/") and cells[5].startswith("A: ")
    assert cells[6] == "0 on 0/40 rows"
    assert len([line for line in index.splitlines() if line.startswith("| [")]) == 1  # nothing else was run here
    assert "| open-r1 rewards |" in index.split("## Not audited here")[1]  # listed with its reason, never dropped


def test_an_unknown_setup_is_refused_in_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path), "--only", "no-such-setup"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("verifier_cards: unknown setup 'no-such-setup'; known: ")
    assert "rewardsmith-math_equivalence" in lines[0]
    assert not (tmp_path / "index.md").exists()


def _trl_style(completions, solution, **kwargs):
    """A TRL-shaped reward: chat completions in, one float per completion; it raises on a completion it cannot read."""
    texts = [c[0]["content"] for c in completions]
    if any(t == "boom" for t in texts):
        raise ValueError("cannot parse")
    return [1.0 if t.strip() == s else 0.0 for t, s in zip(texts, solution, strict=True)]


@pytest.fixture
def restored_registry():
    """The test's wrapped functions leave the reward registry as they found it (it is process-wide state)."""
    from rewardsmith import registry

    registry.list_rewards()
    saved = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)


def test_a_third_party_function_is_scored_as_it_ships(restored_registry):
    from rewardsmith.hackaudit.function_reward import function_reward
    from rewardsmith.hackaudit.spec_kinds import profile_spec

    cls = function_reward("test_cards_trl_style", _trl_style, audit_kinds={"math"})
    reward = cls()
    results = reward.details(["4", "boom", "5"], solution=["4", "4", "4"])
    assert [r.score for r in results] == [1.0, None, 0.0]  # the crash costs its own completion only
    assert "ValueError: cannot parse" in results[1].reason
    assert profile_spec({"rewards": [{"name": "test_cards_trl_style"}]}).kinds == ["math"]

    def verl_style(completion, row):  # verl's compute_score shape: a dict, or (score, metadata) for code
        return {"score": -1.0 if completion != row["solution"] else 1.0, "acc": False}

    per_sample = function_reward("test_cards_verl_style", verl_style, audit_kinds={"math"}, per_sample=True)()
    assert per_sample(["7", "8"], solution=["7", "7"]) == [1.0, -1.0]
