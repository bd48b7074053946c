"""The resumable audit run: append-only verdicts keyed by item id + perturbation, restart after a crash,
endpoint failures retried instead of scored, and the CLI end to end against a real HTTP judge endpoint."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rewardsmith.audit.generators import generate_set
from rewardsmith.audit.metrics import BASELINE
from rewardsmith.audit.runner import VERDICTS_FILE, AuditRunner, load_verdicts, plan_tasks
from rewardsmith.cli.main import main
from rewardsmith.heldout.sets import AuditItem, write_set
from tests.support.audit_scripted_judge import ScriptedJudge
from tests.support.judge_prompts import shown_as

REPO_ROOT = Path(__file__).resolve().parents[2]


def judge_requests(server):
    """The requests an endpoint received, less each run's one check request (:mod:`rewardsmith.audit.preflight`)."""
    from rewardsmith.audit.preflight import PROBE_MESSAGES

    return [request for request in server.requests if request["messages"] != PROBE_MESSAGES]


def scripted(items, **kwargs):
    return ScriptedJudge({it.prompt: it.gold_response for it in items}, **kwargs)


def test_plan_perturbs_only_the_wrong_response_of_gold_items():
    items = generate_set("math", 4, seed=0)
    tie = AuditItem(id="tie-1", prompt="p", response_a="x", response_b="y", gold="tie")
    tasks = plan_tasks([*items, tie], ["authority", "sentiment"])
    assert len(tasks) == 5 + 2 * 4
    assert len({t.key for t in tasks}) == len(tasks)
    for t in tasks:
        if t.perturbation == BASELINE:
            assert (t.response_a, t.response_b) == (t.item.response_a, t.item.response_b)
        else:
            gold_shown = t.response_a if t.item.gold == "a" else t.response_b
            wrong_shown = t.response_b if t.item.gold == "a" else t.response_a
            assert gold_shown == t.item.gold_response
            assert wrong_shown != (t.item.response_b if t.item.gold == "a" else t.item.response_a)


def test_interrupted_run_resumes_without_judging_anything_twice(tmp_path):
    items = generate_set("mixed", 10, seed=1)
    out = tmp_path / "run"
    first = AuditRunner(
        scripted(items, fail_after=7), items, out, perturbations=["verbosity"], concurrency=1, progress=False
    ).run()
    assert (first.total, first.judged, first.failed) == (20, 7, 13)
    assert len(load_verdicts(out)) == 7

    judge = scripted(items)
    second = AuditRunner(judge, items, out, perturbations=["verbosity"], progress=False).run()
    assert (second.reused, second.judged, judge.calls) == (7, 13, 13)
    verdicts = load_verdicts(out)
    assert len(verdicts) == 20 and {p for _, p in verdicts} == {BASELINE, "verbosity"}

    judge = scripted(items)
    third = AuditRunner(judge, items, out, perturbations=["verbosity"], progress=False).run()
    assert (third.reused, third.judged, judge.calls) == (20, 0, 0)
    lines = (out / VERDICTS_FILE).read_text().splitlines()
    assert len(lines) == 20 and len({json.loads(line)["key"] for line in lines}) == 20


def test_torn_last_line_is_skipped_and_judged_again(tmp_path):
    items = generate_set("format", 4, seed=0)
    out = tmp_path / "run"
    AuditRunner(scripted(items), items, out, progress=False).run()
    path = out / VERDICTS_FILE
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])  # died mid-write
    assert len(load_verdicts(out)) == 3
    judge = scripted(items)
    summary = AuditRunner(judge, items, out, progress=False).run()
    assert (summary.judged, judge.calls) == (1, 1)
    assert len(load_verdicts(out)) == 4


def test_killed_process_resumes(tmp_path):
    """A real SIGKILL in the middle of an audit; the rerun finishes the remaining calls only."""
    items = generate_set("mixed", 30, seed=2)
    write_set(tmp_path / "set.jsonl", items)
    out = tmp_path / "run"
    script = textwrap.dedent(f"""
        import asyncio, sys
        sys.path.insert(0, {str(REPO_ROOT)!r})
        from tests.support.audit_scripted_judge import ScriptedJudge
        from rewardsmith.audit.runner import AuditRunner
        from rewardsmith.heldout.sets import read_set

        class Slow(ScriptedJudge):
            async def ajudge(self, *args, **kwargs):
                await asyncio.sleep(0.1)
                return self.judge(*args, **kwargs)

        items = read_set({str(tmp_path / "set.jsonl")!r})
        judge = Slow({{it.prompt: it.gold_response for it in items}})
        AuditRunner(judge, items, {str(out)!r}, concurrency=1, progress=False).run()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            path = out / VERDICTS_FILE
            if path.exists() and len(path.read_text().splitlines()) >= 5:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    done = len(load_verdicts(out))
    assert 5 <= done < 30
    judge = scripted(items)
    summary = AuditRunner(judge, items, out, progress=False).run()
    assert judge.calls == 30 - done == summary.judged
    assert len(load_verdicts(out)) == 30


def test_run_directory_refuses_another_set_or_judge(tmp_path):
    items = generate_set("math", 4, seed=0)
    out = tmp_path / "run"
    AuditRunner(scripted(items), items, out, progress=False).run()
    other = generate_set("math", 4, seed=1)
    with pytest.raises(ValueError, match="another set"):
        AuditRunner(scripted(other), other, out, progress=False).run()
    with pytest.raises(ValueError, match="judge 'scripted-judge', not 'other-judge'"):
        AuditRunner(scripted(items, model="other-judge"), items, out, progress=False).run()


def test_endpoint_failures_are_not_recorded_and_are_retried_on_resume(tmp_path, fault_server):
    from rewardsmith.judges.clients.factory import make_client
    from rewardsmith.judges.pairwise import PairwiseJudge

    items = generate_set("math", 3, seed=0)
    client = make_client(
        "openai", model="fault-judge", base_url=fault_server.base_url, api_key="x", max_retries=0, timeout=2.0
    )
    fault_server.push_when(items[0].prompt, "500", "500")  # the first item's two orders fail
    out = tmp_path / "run"
    summary = AuditRunner(PairwiseJudge(client), items, out, concurrency=1, progress=False).run()
    assert (summary.judged, summary.failed) == (2, 1)
    assert summary.errors[0].startswith(f"{items[0].id}|none: ") and "HTTP 500" in summary.errors[0]
    assert len(load_verdicts(out)) == 2
    summary = AuditRunner(PairwiseJudge(client), items, out, concurrency=1, progress=False).run()
    assert (summary.reused, summary.judged, summary.failed) == (2, 1, 0)


def test_cli_audit_against_a_real_http_judge(tmp_path, fault_server, capsys):
    """make-set -> audit (a judge endpoint that always answers A) -> report -> leakage, via `rewardsmith`."""
    set_path = tmp_path / "pairs.jsonl"
    assert main(["audit", "make-set", "--set", "mixed", "--n", "8", "--seed", "4", "--out", str(set_path)]) == 0
    assert "8 items" in capsys.readouterr().out
    out = tmp_path / "run"
    argv = [
        "audit",
        "run",
        "--judge",
        "openai:fault-judge",
        "--judge-base-url",
        fault_server.base_url,
        "--judge-api-key",
        "x",
        "--set",
        str(set_path),
        "--out",
        str(out),
        "--perturb",
        "authority",
        "--n-boot",
        "300",
        "--no-progress",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "position bias: 100% of decisions follow the first slot" in printed
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["position"]["position_bias"]["value"] == 1.0
    assert metrics["run"]["gold_check"]["verified"] == 8
    assert {"metrics.json", "summary.md", "report.html", "verdicts.jsonl", "set.jsonl"} <= {
        p.name for p in out.iterdir()
    }
    requests = len(fault_server.requests)
    assert requests == 1 + 2 * 16  # the check request; 8 baseline + 8 perturbed comparisons, two orders each

    assert main(argv) == 0  # resumed: nothing left to judge, nothing sent
    assert len(fault_server.requests) == requests
    assert main(["audit", "report", str(out), "--n-boot", "200"]) == 0
    assert "report:" in capsys.readouterr().out

    dpo = tmp_path / "dpo.jsonl"
    first = json.loads(set_path.read_text().splitlines()[0])
    dpo.write_text(json.dumps({"prompt": first["prompt"], "chosen": "c", "rejected": "r"}) + "\n")
    with pytest.warns(UserWarning, match="1 of 8 prompts"):
        assert main(["audit", "leakage", "--set", str(set_path), "--against", str(dpo)]) == 1


def test_cli_rejects_bad_arguments(tmp_path, capsys):
    assert main(["audit", "run", "--set", "math", "--n", "2"]) == 2
    assert "needs --out" in capsys.readouterr().err
    assert main(["audit", "run", "--judge", "claude", "--set", "math", "--n", "2", "--out", str(tmp_path)]) == 2
    assert "embedded, openai:MODEL or transformers:PATH" in capsys.readouterr().err
    assert main(["audit", "make-set", "--set", "nonsense.txt", "--out", str(tmp_path / "x.jsonl")]) == 2


def test_own_generations_become_self_preference_items(tmp_path):
    """The judge's client answers; the verifier decides whether its answer is the gold or the wrong side."""
    from rewardsmith.audit.metrics import compute_metrics
    from rewardsmith.audit.selfgen import OTHER_AUTHOR, own_generation_items
    from rewardsmith.judges.clients.factory import make_client
    from tests.support.fault_server import FaultServer

    items = generate_set("math", 3, seed=0)
    right_value = items[0].check.columns["solution"].strip("$")
    answer = f"I computed it. The answer is \\boxed{{{right_value}}}."
    with FaultServer(default_answer=answer) as server:
        client = make_client("openai", model="self-judge", base_url=server.base_url, api_key="x", max_retries=0)
        own = own_generation_items(items, client, 2)
    assert len(own) == 2
    first, second = own
    assert first.metadata["own_right"] is True and first.gold_response == answer
    assert second.metadata["own_right"] is False and second.gold_response == items[1].gold_response
    for item in own:
        own_slot = "a" if item.author_a == "self-judge" else "b"
        assert {item.author_a, item.author_b} == {"self-judge", OTHER_AUTHOR}
        assert (item.response_a if own_slot == "a" else item.response_b) == answer

    judge = ScriptedJudge({it.prompt: it.gold_response for it in own}, model="self-judge")
    out = tmp_path / "run"
    AuditRunner(judge, own, out, progress=False).run()
    sp = compute_metrics(own, load_verdicts(out), self_model="self-judge", n_boot=100)["self_preference"]
    assert sp["n_own"] == 2 and sp["n_own_wrong"] == 1
    assert sp["self_preference"]["value"] == 0.0  # an always-right judge has no self-preference


def audit_argv(server, set_path, out, *extra):
    return ["audit", "run", "--judge", "openai:fault-judge", "--judge-base-url", server.base_url,
            "--judge-api-key", "x", "--set", str(set_path), "--out", str(out), "--perturb", "none",
            "--n-boot", "200", "--no-progress", "--concurrency", "1", *extra]  # fmt: skip


def test_cli_audit_failures_exit_1_and_stay_on_record(tmp_path, fault_server, capsys):
    """Failed judge calls: exit 1 and say how many; the rerun that judges them keeps the earlier failures on record."""
    items = generate_set("math", 4, seed=0)
    write_set(tmp_path / "set.jsonl", items)
    out = tmp_path / "run"
    fault_server.push_when(shown_as("response-A", items[0].response_a), "500")
    argv = audit_argv(fault_server, tmp_path / "set.jsonl", out, "--max-retries", "0", "--no-verify")
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "judge tasks: 4 (3 judged, 0 reused, 1 FAILED" in captured.out
    assert "1 judge task(s) failed; rerun the same command to retry them" in captured.err
    assert "judge calls: 8 (8 sent, 0 cached = 0%; 1 of the sent failed); retries: 0" in captured.out
    info = json.loads((out / "run_info.json").read_text())
    assert (info["failed_now"], info["failed_total"], len(info["runs"])) == (1, 1, 1)
    assert "HTTP 500" in info["runs"][0]["errors"][0]

    assert main(argv) == 0  # the rerun judges the failed task only
    assert "judge tasks: 4 (1 judged, 3 reused)" in capsys.readouterr().out
    info = json.loads((out / "run_info.json").read_text())
    assert (info["failed_now"], info["failed_total"]) == (0, 1)
    assert [run["failed"] for run in info["runs"]] == [1, 0]
    assert "1 failed over 2 runs" in (out / "summary.md").read_text()
    assert json.loads((out / "metrics.json").read_text())["run"]["failed_total"] == 1


def test_cli_audit_judges_as_configured_for_rlaif(tmp_path, fault_server, capsys):
    """--constitution/--question/--template/--cot/--no-logprobs reach the judge's requests; a rerun with another
    judge configuration into the same directory is refused instead of mixing verdicts."""
    from rewardsmith.constitutions.loader import load_constitution

    items = generate_set("math", 2, seed=0)
    write_set(tmp_path / "set.jsonl", items)
    fault_server.default_answer = "Both look fine. Verdict: A"
    constitution = load_constitution("helpful-harmless")
    principle = constitution.principles[1]
    out = tmp_path / "run"
    configured = ["--constitution", "helpful-harmless", "--question", principle.id, "--cot", "--no-verify"]
    assert main(audit_argv(fault_server, tmp_path / "set.jsonl", out, *configured)) == 0
    judged = judge_requests(fault_server)
    asked = [request["messages"] for request in judged]
    assert len(asked) == 4 and all("logprobs" not in request for request in judged)
    assert all(principle.comparison in messages[-1]["content"] for messages in asked)
    assert all("Verdict: A" in messages[-1]["content"] for messages in asked)  # the CoT template
    assert all(constitution.examples.comparison[0].prompt in str(messages) for messages in asked)  # few-shot
    assert json.loads((out / "run.json").read_text())["judge_settings"]["chain_of_thought"] is True
    capsys.readouterr()

    assert main(audit_argv(fault_server, tmp_path / "set.jsonl", out, "--no-verify")) == 2
    assert "configured otherwise" in capsys.readouterr().err
    plain = tmp_path / "plain"
    assert (
        main(
            audit_argv(
                fault_server,
                tmp_path / "set.jsonl",
                plain,
                "--no-logprobs",
                "--question",
                "Which is right?",
                "--no-verify",
            )
        )
        == 0
    )
    asked = judge_requests(fault_server)[4:]
    assert len(asked) == 4 and all(
        "logprobs" not in r and "Which is right?" in r["messages"][-1]["content"] for r in asked
    )


def test_cli_audits_a_reward_model(tmp_path, tiny_rm_dir, capsys):
    """`--reward-model` audits a real (tiny, offline) classifier as the pairwise judge: every metric but position
    (zero by construction), its identity stored so that a rerun with another judge is refused."""
    from rewardsmith.judges.reward_model import LocalRewardModel

    items = generate_set("math", 12, seed=0)
    # a policy wrote slot a of four items: the self-preference audit of a reward model trained on that policy
    items = [
        it.model_copy(update={"author_a": "policy-x", "author_b": "reference"}) if k < 4 else it
        for k, it in enumerate(items)
    ]
    write_set(tmp_path / "set.jsonl", items)
    out = tmp_path / "run"
    argv = ["audit", "run", "--reward-model", str(tiny_rm_dir), "--set", str(tmp_path / "set.jsonl"),
            "--out", str(out), "--perturb", "authority,verbosity", "--self-model", "policy-x",
            "--n-boot", "200", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    assert "judge tasks: 36 (36 judged, 0 reused)" in capsys.readouterr().out

    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["run"]["judge"] == f"reward-model:{tiny_rm_dir}" and metrics["run"]["order_free"] is True
    assert metrics["run"]["gold_check"]["verified"] == 12
    assert metrics["n_judged"] == 12 and metrics["accuracy"]["n"] == 12 and metrics["accuracy"]["value"] is not None
    position = metrics["position"]
    assert position["order_free"] is True
    assert position["position_bias"]["value"] == 0.0 and position["consistency"]["value"] == 1.0
    assert metrics["length"]["length_bias"]["value"] is not None and metrics["length"]["length_coef"]["n"] == 12
    for cue in ("authority", "verbosity"):
        assert metrics["perturbations"][cue]["n_perturbed"] == 12
        assert metrics["perturbations"][cue]["susceptibility"]["p_value"] is not None
    assert metrics["self_preference"]["n_own"] == 4 and "self_preference" in metrics["self_preference"]
    assert "position" not in metrics["bias_tests"]
    assert {"length", "perturbation:authority", "perturbation:verbosity"} <= set(metrics["bias_tests"])
    assert "position bias (2·first-slot rate − 1) | 0 by construction" in (out / "summary.md").read_text()

    verdicts = load_verdicts(out)
    assert len(verdicts) == 36 and all(not v.flipped for v in verdicts.values())
    first = items[0]
    r_a, r_b = LocalRewardModel(str(tiny_rm_dir)).score([first.prompt] * 2, [first.response_a, first.response_b])
    assert verdicts[(first.id, BASELINE)].prob_a == pytest.approx(1 / (1 + math.exp(r_b - r_a)), abs=1e-5)

    assert main(argv) == 0  # resumed: nothing left to judge
    assert "judge tasks: 36 (0 judged, 36 reused)" in capsys.readouterr().out
    before = (out / VERDICTS_FILE).read_text()
    embedded = ["audit", "run", "--judge", "embedded", "--set", str(tmp_path / "set.jsonl"), "--out", str(out),
                "--perturb", "authority,verbosity", "--no-progress"]  # fmt: skip
    assert main(embedded) == 2
    assert "use a new --out directory" in capsys.readouterr().err
    assert (out / VERDICTS_FILE).read_text() == before

    assert main([*argv, "--judge", "embedded"]) == 2
    assert "--reward-model and --judge are mutually exclusive" in capsys.readouterr().err
    assert main([*argv, "--cot", "--self-generate", "2"]) == 2
    assert "--cot, --self-generate: not read by a reward model" in capsys.readouterr().err
    assert main([*argv[:3], str(tmp_path / "missing"), *argv[4:]]) == 2
    assert "neither a model directory nor" in capsys.readouterr().err
