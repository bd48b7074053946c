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
    assert f"wrote {out / 'index.md'}: 1 cards, 2 not audited" in said

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
