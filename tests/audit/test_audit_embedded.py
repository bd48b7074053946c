"""End to end: audit the embedded SmolLM2-135M judge (real llama.cpp server on 127.0.0.1) through the CLI.
Asked "A or B" (``--judge-template pairwise``) the model is far too small to judge and picks the first slot
almost always; the audit must say so. Its default, the likelihood judge, has no position to prefer."""

from __future__ import annotations

import json
import re
import time

import pytest

from rewardsmith.cli.main import main

pytestmark = [pytest.mark.llama, pytest.mark.slow]


def test_embedded_judge_audit_flags_its_position_bias(embedded_server, tmp_path, capsys):
    out = tmp_path / "smollm"
    argv = [
        "audit",
        "run",
        "--judge",
        "embedded",
        "--judge-base-url",
        embedded_server.base_url,
        "--judge-template",
        "pairwise",
        "--set",
        "mixed",
        "--n",
        "12",
        "--seed",
        "0",
        "--perturb",
        "none",
        "--self-generate",
        "1",
        "--out",
        str(out),
        "--n-boot",
        "500",
        "--no-progress",
    ]
    started = time.monotonic()
    assert main(argv) == 0
    first_run_s = time.monotonic() - started
    printed = capsys.readouterr().out
    assert "[high] position bias" in printed

    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_judged"] == metrics["n_items"] >= 12
    position = metrics["position"]
    assert position["position_bias"]["low"] > 0.3, position
    assert position["consistency"]["value"] < 0.5
    assert metrics["run"]["judge"] == embedded_server.model
    assert metrics["self_preference"]["n_own"] >= 1  # the judge's own answers are in the set
    assert any(f["bias"] == "position" and f["severity"] == "high" for f in metrics["flags"])
    html = (out / "report.html").read_text()
    assert len(re.findall(r"data:image/png;base64,", html)) == 3

    started = time.monotonic()
    assert main(argv) == 0  # resumed from verdicts.jsonl and the judge cache: no model call
    assert time.monotonic() - started < first_run_s / 2
    assert json.loads((out / "metrics.json").read_text())["position"] == position


def test_the_default_embedded_judge_has_no_position_bias(embedded_server, tmp_path, capsys):
    out = tmp_path / "likelihood"
    argv = ["audit", "run", "--judge", "embedded", "--judge-base-url", embedded_server.base_url, "--set", "mixed",
            "--n", "6", "--seed", "0", "--perturb", "none", "--out", str(out), "--n-boot", "200",
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_judged"] == metrics["n_items"] == 6
    assert metrics["position"]["position_bias"]["value"] == pytest.approx(0.0)
    assert metrics["position"]["consistency"]["value"] == pytest.approx(1.0)
    assert not any(f["bias"] == "position" for f in metrics["flags"])
