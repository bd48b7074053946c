"""The embedded judge survives a llama.cpp server that dies: the crash is named (signal and fix), never reported as
"connection refused", and judging continues in-process through transformers.

The servers here are real processes that really die with SIGSEGV (tests/support/crashing_llama.py): a stdlib
stand-in that needs no llama-cpp-python, and — where it is installed — rewardsmith's real llama.cpp launcher whose
first evaluation faults, or a healthy real server killed with SIGSEGV in the middle of a run.
"""

from __future__ import annotations

import functools
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rewardsmith.judges.base import ChatParams, JudgeError
from rewardsmith.judges.clients.embedded import (
    EmbeddedServer,
    EmbeddedServerClient,
    ServerCrashed,
    ServerUnusable,
    llama_server_missing,
)
from rewardsmith.judges.clients.embedded_health import REBUILD_HINT, crash_message, describe_exit
from rewardsmith.judges.clients.factory import ManagedChatClient
from rewardsmith.judges.pointwise import LikelihoodJudge

SCRIPT = str(Path(__file__).resolve().parents[1] / "support" / "crashing_llama.py")
MESSAGES = [{"role": "user", "content": "Say A."}]
PARAMS = ChatParams(max_tokens=2)


def stand_in(mode: str, **options) -> EmbeddedServer:
    """A real server process from the stand-in launcher (no model is read)."""
    return EmbeddedServer("/nonexistent/model.gguf", launcher=(sys.executable, SCRIPT, mode), **options)


def tiny_fallback(tiny_model_dir):
    """The in-process fallback on the tiny offline model (picklable, as a trainer's copy of the client needs)."""
    from rewardsmith.judges.clients.transformers_local import TransformersChatClient

    return functools.partial(TransformersChatClient, tiny_model_dir, model_name="tiny@transformers")


def _wait_dead(process, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)


# -- how a dead server is described: a verdict table ------------------------------------------------------------


@pytest.mark.parametrize(
    ("returncode", "expected", "names_rebuild"),
    [
        (-11, "was killed by SIGSEGV (signal 11)", True),
        (-4, "was killed by SIGILL (signal 4)", True),
        (-7, "was killed by SIGBUS (signal 7)", True),
        (-9, "was killed by SIGKILL (signal 9)", False),
        (1, "exited with status 1", False),
        (None, "is gone", False),
    ],
)
def test_crash_message_names_how_the_server_ended(returncode, expected, names_rebuild):
    message = crash_message(returncode, "while judging", "line one\nSegmentation fault\n")
    assert expected in message and describe_exit(returncode) in message
    assert "while judging" in message and "Segmentation fault" in message
    assert REBUILD_HINT in message  # the fix is always there; a fault signal also names the likely cause
    assert ("compiled for another CPU" in message) is names_rebuild
    assert "connection refused" not in message.lower()


def test_rebuild_hint_builds_portably_and_ignores_cached_wheels():
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF"' in REBUILD_HINT
    assert "--no-cache-dir" in REBUILD_HINT and "--force-reinstall" in REBUILD_HINT


# -- start-up: the self-test, not /v1/models, declares the server ready -------------------------------------------


def test_server_that_dies_on_its_first_request_fails_the_self_test_as_a_crash():
    server = stand_in("crash-on-first-post", startup_timeout=30)
    with pytest.raises(ServerCrashed) as caught:
        server.start()
    message = str(caught.value)
    assert "killed by SIGSEGV" in message and "start-up self-test" in message
    assert REBUILD_HINT in message and "general protection fault" in message  # the server's own last words
    assert "refused" not in message.lower()
    assert not server.running and server.last_exit == -signal.SIGSEGV
    assert server.crash() is caught.value  # every later request meets the same crash, not a refused connection


def test_first_request_falls_back_in_process_and_says_why(tiny_model_dir, caplog):
    client = EmbeddedServerClient(server=stand_in("crash-on-first-post"), fallback=tiny_fallback(tiny_model_dir))
    with caplog.at_level("WARNING", logger="rewardsmith.judges.clients.embedded"):
        result = client.complete(MESSAGES, PARAMS)
    assert result.model == "tiny@transformers" and client.model == "tiny@transformers"
    assert "killed by SIGSEGV" in client.fallback_reason
    assert "killed by SIGSEGV" in caplog.text and "in-process through transformers" in caplog.text
    assert caplog.text.count("killed by SIGSEGV") == 1  # said once, not per request
    scores = client.loglikelihood(MESSAGES, ["A", "B b"])  # the likelihood route falls back too
    assert len(scores.scores) == 2 and all(s.tokens > 0 for s in scores.scores)


def test_without_a_fallback_the_crash_is_the_error():
    client = EmbeddedServerClient(server=stand_in("crash-on-first-post"), fallback=None)
    with pytest.raises(ServerCrashed, match="killed by SIGSEGV"):
        client.complete(MESSAGES, PARAMS)
    with pytest.raises(ServerCrashed, match="killed by SIGSEGV"):  # the next request too, at once
        client.loglikelihood(MESSAGES, ["A"])


def test_missing_fallback_extra_still_names_the_crash():
    def no_transformers():
        raise JudgeError("judge backend 'transformers' needs the 'judge-local' extra: pip install ...")

    client = EmbeddedServerClient(server=stand_in("crash-on-first-post"), fallback=no_transformers)
    with pytest.raises(ServerUnusable) as caught:
        client.complete(MESSAGES, PARAMS)
    assert "killed by SIGSEGV" in str(caught.value) and "judge-local" in str(caught.value)


# -- mid-run: a server that answered, then died ----------------------------------------------------------------


@pytest.mark.parametrize("call", ["complete", "acomplete", "loglikelihood"])
def test_server_killed_mid_run_is_reported_as_a_crash_and_judging_goes_on(call, tiny_model_dir, caplog):
    import asyncio

    client = EmbeddedServerClient(server=stand_in("answer"), max_retries=4, fallback=tiny_fallback(tiny_model_dir))

    def request():
        if call == "complete":
            return client.complete(MESSAGES, PARAMS)
        if call == "acomplete":
            return asyncio.run(client.acomplete(MESSAGES, PARAMS))
        return client.loglikelihood(MESSAGES, ["A"])

    try:
        first = request()
        assert client.fallback_reason is None
        process = client.server.process
        os.kill(process.pid, signal.SIGSEGV)
        _wait_dead(process)
        started = time.monotonic()
        with caplog.at_level("WARNING", logger="rewardsmith.judges.clients.embedded"):
            second = request()
        assert time.monotonic() - started < 60  # no five rounds of retries against a dead port
    finally:
        client.close()
    assert type(first) is type(second)
    assert "killed by SIGSEGV" in client.fallback_reason and "while judging" in client.fallback_reason
    assert "refused" not in caplog.text.lower()
    assert client.model == "tiny@transformers"


def test_likelihood_answer_cut_mid_body_is_retried_on_the_same_server():
    client = EmbeddedServerClient(server=stand_in("cut-second-likelihood"), max_retries=2, fallback=None)
    try:
        scores = client.loglikelihood(MESSAGES, ["A", "B b"])  # the first answer is cut, its retry answers
        assert [score.tokens for score in scores.scores] == [1, 3]
        assert client.fallback_reason is None and client.server.running
    finally:
        client.close()


def test_server_killed_mid_run_without_fallback_raises_the_crash_not_connection_refused():
    client = EmbeddedServerClient(server=stand_in("answer"), max_retries=3, fallback=None)
    try:
        client.complete(MESSAGES, PARAMS)
        os.kill(client.server.process.pid, signal.SIGSEGV)
        _wait_dead(client.server.process)
        for _ in range(3):  # every request that meets the dead server says the same
            with pytest.raises(ServerCrashed) as caught:
                client.complete(MESSAGES, PARAMS)
            assert "killed by SIGSEGV" in str(caught.value) and "refused" not in str(caught.value).lower()
    finally:
        client.close()


def test_a_pickled_copy_names_a_dead_server_as_gone():
    client = EmbeddedServerClient(server=stand_in("answer"), max_retries=2, fallback=None)
    try:
        client.complete(MESSAGES, PARAMS)
        copy = pickle.loads(pickle.dumps(client))
        assert copy.complete(MESSAGES, PARAMS).text == "A"
        os.kill(client.server.process.pid, signal.SIGSEGV)
        _wait_dead(client.server.process)
        client.server.process.wait()  # reaped by its owner, as the owner's next request would
        with pytest.raises(ServerCrashed, match="is gone"):
            copy.complete(MESSAGES, PARAMS)
    finally:
        client.close()


def test_a_copy_pickled_after_the_fallback_judges_in_process(tiny_model_dir):
    client = EmbeddedServerClient(server=stand_in("crash-on-first-post"), fallback=tiny_fallback(tiny_model_dir))
    client.complete(MESSAGES, PARAMS)
    copy = pickle.loads(pickle.dumps(client))
    assert copy.fallback_reason == client.fallback_reason
    assert copy.complete(MESSAGES, PARAMS).model == "tiny@transformers"


def test_likelihood_judge_over_a_crashing_server_still_judges(tiny_model_dir):
    transport = EmbeddedServerClient(server=stand_in("crash-on-first-post"), fallback=tiny_fallback(tiny_model_dir))
    judge = LikelihoodJudge(ManagedChatClient(transport))
    verdict = judge.judge("What is 2 + 2?", "4", "five hundred")
    assert verdict.ab.source != "error", verdict.ab
    assert 0.0 <= verdict.prob_a <= 1.0
    assert judge.model == "tiny@transformers"


# -- the real llama.cpp server ----------------------------------------------------------------------------------


def _need_llama() -> None:
    from rewardsmith.judges.clients.embedded import packaged_model_path

    missing = llama_server_missing()
    if missing:
        pytest.skip(f"llama.cpp server unavailable: {missing}")
    try:
        packaged_model_path()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


@pytest.mark.llama
@pytest.mark.slow
def test_real_llama_server_faulting_on_first_eval_falls_back_to_the_packaged_model(caplog):
    _need_llama()
    server = EmbeddedServer(launcher=(sys.executable, SCRIPT, "real-crash-on-eval"), startup_timeout=120)
    client = EmbeddedServerClient(server=server)  # the default fallback: the same GGUF through transformers
    judge = LikelihoodJudge(ManagedChatClient(client))
    with caplog.at_level("WARNING", logger="rewardsmith.judges.clients.embedded"):
        verdict = judge.judge("What is the capital of France?", "Paris.", "Banana.")
    assert verdict.ab.source != "error", verdict.ab
    assert "killed by SIGSEGV" in caplog.text and "start-up self-test" in caplog.text
    assert REBUILD_HINT in caplog.text
    from rewardsmith.judges.clients.embedded import INPROCESS_MODEL_NAME

    assert judge.model == INPROCESS_MODEL_NAME


@pytest.mark.llama
@pytest.mark.slow
def test_real_llama_server_killed_mid_run_is_a_crash():
    _need_llama()
    client = EmbeddedServerClient(server=EmbeddedServer(startup_timeout=120), max_retries=4, fallback=None)
    try:
        assert client.complete(MESSAGES, PARAMS).text is not None  # passed its self-test, judged once
        assert client.loglikelihood(MESSAGES, ["A"]).scores[0].tokens > 0
        os.kill(client.server.process.pid, signal.SIGSEGV)
        _wait_dead(client.server.process)
        with pytest.raises(ServerCrashed) as caught:
            client.loglikelihood(MESSAGES, ["A"])
        assert "killed by SIGSEGV" in str(caught.value) and "refused" not in str(caught.value).lower()
    finally:
        client.close()


# -- the demos complete over a llama.cpp build that crashes ------------------------------------------------------

DEMO_LAUNCH = """
import sys
from rewardsmith.judges.clients import embedded, embedded_server
mode = sys.argv[1]
embedded_server.DEFAULT_LAUNCHER = (sys.executable, {script!r}, mode)  # the server process that starts faults
if mode == "crash-on-first-post":  # no llama-cpp-python here: the stand-in is chosen as llama.cpp would be
    embedded.llama_server_missing = embedded_server.llama_server_missing = lambda: None
from rewardsmith.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["rlaif", "pairs", "--demo", "--out", "demo-pairs"],
        ["audit", "run", "--judge", "embedded", "--set", "math", "--n", "4", "--perturb", "verbosity", "--out", "run",
         "--no-progress", "--n-boot", "200"],
    ],
    ids=["rlaif-pairs-demo", "audit-run-embedded"],
)  # fmt: skip
def test_demos_complete_when_the_llama_server_crashes(tmp_path, argv):
    from rewardsmith.judges.clients.embedded import packaged_model_path

    try:
        packaged_model_path()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    mode = "real-crash-on-eval" if llama_server_missing() is None else "crash-on-first-post"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_DATASETS_CACHE": str(tmp_path / "hf")}
    result = subprocess.run(
        [sys.executable, "-c", DEMO_LAUNCH.format(script=SCRIPT), mode, *argv],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "killed by SIGSEGV" in result.stderr and REBUILD_HINT in result.stderr
    assert result.stderr.count("killed by SIGSEGV") == 1  # named once, then judged in-process
    assert "connection refused" not in result.stderr.lower()  # exit 0 above: no item failed
    assert "continues in-process through transformers" in result.stderr
    assert "judged by: in-process transformers (fallback)" in result.stdout  # the summary says what judged
    import json

    run_json = tmp_path / ("demo-pairs/state" if argv[0] == "rlaif" else "run") / "run.json"
    (record,) = json.loads(run_json.read_text())["judged_by"]
    assert record["fallback"] is True and "killed by SIGSEGV" in record["fallback_reason"]
    if argv[0] == "rlaif":
        assert "pairs: 20 compared" in result.stdout
        assert "judge: smollm2-135m-instruct@transformers" in result.stdout  # the model that did the work
        assert (tmp_path / "demo-pairs" / "train.jsonl").read_text().strip()
    else:
        assert "judge tasks: 8 (8 judged" in result.stdout
        assert (tmp_path / "run" / "metrics.json").exists() and (tmp_path / "run" / "report.html").exists()


# -- the run records name the transport that judged --------------------------------------------------------------


class KillsServerAfterFirst(LikelihoodJudge):
    """The likelihood judge whose server is killed (a real SIGSEGV) once its first verdict is in: a mid-run crash."""

    async def ajudge(self, *args, **kwargs):
        verdict = await super().ajudge(*args, **kwargs)
        process = self.client.transport.server.process
        if process is not None and process.poll() is None:
            os.kill(process.pid, signal.SIGSEGV)
            _wait_dead(process)
        return verdict


def _audit(judge, out, n=2):
    import json

    from rewardsmith.audit.generators import generate_set
    from rewardsmith.audit.runner import AuditRunner

    summary = AuditRunner(judge, generate_set("math", n, seed=0), out, concurrency=1, progress=False).run()
    return summary, json.loads((out / "run.json").read_text())


def test_audit_run_json_says_the_fallback_judged_and_why(tmp_path, tiny_model_dir):
    transport = EmbeddedServerClient(server=stand_in("crash-on-first-post"), fallback=tiny_fallback(tiny_model_dir))
    judge = LikelihoodJudge(ManagedChatClient(transport))
    configured = judge.model
    summary, run = _audit(judge, tmp_path / "run")
    assert summary.judged == 2 and summary.failed == 0
    (record,) = run["judged_by"]
    assert record["fallback"] is True and record["transport"] == "in-process transformers (fallback)"
    assert "killed by SIGSEGV" in record["fallback_reason"] and REBUILD_HINT in record["fallback_reason"]
    assert record["switched_midway"] is False and record["server_answers"] == 0  # died on its self-test
    assert run["judge"] == record["model"] == "tiny@transformers"
    assert run["judge_configured"] == configured != "tiny@transformers"
    assert summary.judged_by == record
    from rewardsmith.audit.pipeline import write_outputs

    metrics, paths = write_outputs(tmp_path / "run", n_boot=50)  # the report's header says it too
    assert metrics["run"]["judged_by"] == [record]
    assert "fell back because the embedded llama.cpp server was killed by SIGSEGV" in paths["html"].read_text()


def test_audit_run_json_says_the_server_judged_then_switched_midway(tmp_path, tiny_model_dir):
    transport = EmbeddedServerClient(server=stand_in("answer"), fallback=tiny_fallback(tiny_model_dir))
    judge = KillsServerAfterFirst(ManagedChatClient(transport))
    try:
        summary, run = _audit(judge, tmp_path / "run")
    finally:
        transport.close()
    assert summary.judged == 2 and summary.failed == 0
    (record,) = run["judged_by"]
    assert record["fallback"] is True and record["switched_midway"] is True and record["server_answers"] > 0
    assert "killed by SIGSEGV" in record["fallback_reason"] and "while judging" in record["fallback_reason"]
    assert run["judge"] == "tiny@transformers"


def test_audit_run_json_says_the_server_judged_when_it_lived(tmp_path, tiny_model_dir):
    """The same record for a server that stays up: no fallback, so the assertions above can fail."""
    transport = EmbeddedServerClient(server=stand_in("answer"), fallback=tiny_fallback(tiny_model_dir))
    judge = LikelihoodJudge(ManagedChatClient(transport))
    try:
        summary, run = _audit(judge, tmp_path / "run")
        # a rerun into the same directory (nothing left to judge) keeps the record and resumes, not refuses
        rerun_summary, rerun = _audit(judge, tmp_path / "run")
    finally:
        transport.close()
    (record,) = run["judged_by"]
    assert record["transport"] == "llama.cpp server" and record["fallback"] is False
    assert record["fallback_reason"] is None and record["server_answers"] > 0
    assert run["judge"] == run["judge_configured"] == transport.server.model
    assert summary.judged == 2 and rerun_summary.reused == 2 and rerun["judged_by"] == run["judged_by"]


def test_rlaif_pairs_run_json_and_rows_say_the_fallback_judged(tmp_path, tiny_model_dir):
    import json

    from rewardsmith.constitutions.loader import load_constitution
    from rewardsmith.constitutions.pair_building import PairsConfig
    from rewardsmith.constitutions.prompts import PromptItem
    from rewardsmith.constitutions.runners import run_pairs

    transport = EmbeddedServerClient(server=stand_in("crash-on-first-post"), fallback=tiny_fallback(tiny_model_dir))
    judge = LikelihoodJudge(ManagedChatClient(transport))
    items = [
        PromptItem(0, "p0", "What is 2 + 2?", ("4", "five hundred")),
        PromptItem(1, "p1", "Name a primary colour.", ("Red.", "Banana.")),
    ]
    out = tmp_path / "pairs"
    run_pairs(
        items, out, judge=judge, constitution=load_constitution("helpful-harmless"), config=PairsConfig(),
        formats=("jsonl",), progress=False,
    )  # fmt: skip
    (state,) = [p for p in out.iterdir() if (p / "run.json").exists()]
    run = json.loads((state / "run.json").read_text())
    (record,) = run["judged_by"]
    assert record["fallback"] is True and "killed by SIGSEGV" in record["fallback_reason"]
    assert record["model"] == "tiny@transformers"
    assert json.loads((out / "summary.json").read_text())["judged_by"] == record
    rows = [json.loads(line) for line in (out / "dropped.jsonl").read_text().splitlines()]
    train = out / "train.jsonl"
    rows += [json.loads(line) for line in train.read_text().splitlines()] if train.exists() else []
    assert rows and all(row["judge_model"] == "tiny@transformers" for row in rows)
    assert all(row["judge_transport"] == "in-process transformers (fallback)" for row in rows)
