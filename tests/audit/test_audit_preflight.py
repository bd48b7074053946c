"""A judge that cannot answer fails the audit at once, in one line; a report that judged nothing says so on top.

Against a real dead endpoint (a closed port on 127.0.0.1) and a real server that answers 401 to every request,
the audit, its command line and the RLAIF pairs run must stop after one check request — seconds, not the
minute every task's retries took — naming the endpoint and the fix. An audit whose judge passed the check but
then failed every task (or most) must never head its summary, report or output with "no bias flagged".
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai  # noqa: F401  (imported once here: on a loaded machine the SDK's import alone takes seconds)
import pytest

from rewardsmith.audit.flags import coverage_problem
from rewardsmith.audit.generators import generate_set
from rewardsmith.audit.pipeline import run_audit
from rewardsmith.audit.preflight import JudgeUnavailable
from rewardsmith.audit.runner import AuditRunner
from rewardsmith.cli.main import main
from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.pairwise import PairwiseJudge
from tests.support.extras import require_extras
from tests.support.fault_server import FaultServer
from tests.support.json_handler import QuietJSONHandler

#: Seconds a check may take to fail: one request and at most one short retry, on a loaded two-core machine.
FAST = 5.0


@pytest.fixture
def dead_url() -> str:
    """An OpenAI-style base URL on a port of 127.0.0.1 that nothing listens on (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class RefusingKeyServer:
    """An OpenAI-compatible server that answers every request 401, as api.openai.com does for a wrong key."""

    def __init__(self) -> None:
        self.requests = 0
        server = self

        class Handler(QuietJSONHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.requests += 1
                error = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
                self._send(401, json.dumps(error).encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def refusing() -> Iterator[RefusingKeyServer]:
    server = RefusingKeyServer()
    yield server
    server.close()


def judge_at(base_url: str) -> PairwiseJudge:
    # the client's own defaults (4 retries with backoff): what made every task take seconds
    return PairwiseJudge(make_client("openai", model="judge-model", base_url=base_url, api_key="wrong-key"))


def timed(call: Any) -> tuple[BaseException, float]:
    started = time.monotonic()
    with pytest.raises(JudgeUnavailable) as failed:
        call()
    return failed.value, time.monotonic() - started


# (what is wrong, the fix the one line must name)
ENDPOINTS = [("dead", "--judge-base-url"), ("refusing", "--judge-api-key")]


@pytest.mark.parametrize(("kind", "fix"), ENDPOINTS)
def test_the_audit_runner_fails_at_once_naming_endpoint_and_fix(
    kind: str, fix: str, dead_url: str, refusing: RefusingKeyServer, tmp_path: Path
) -> None:
    url = dead_url if kind == "dead" else refusing.base_url
    items = generate_set("math", 6, seed=0)
    error, elapsed = timed(lambda: AuditRunner(judge_at(url), items, tmp_path / "run", progress=False).run())
    message = str(error)
    assert elapsed < FAST, f"{elapsed:.1f} s to find a {kind} endpoint"
    assert url in message and fix in message and "\n" not in message
    assert not (tmp_path / "run" / "verdicts.jsonl").exists()  # nothing was judged, nothing recorded
    if kind == "refusing":
        assert refusing.requests == 1  # one check request, not one per task and order


def test_run_audit_checks_before_the_judge_writes_its_own_answers(dead_url: str, tmp_path: Path) -> None:
    require_extras("audit")
    items = generate_set("math", 4, seed=0)
    error, elapsed = timed(
        lambda: run_audit(judge_at(dead_url), items, tmp_path / "run", set_name="t", self_generate=2, progress=False)
    )
    assert elapsed < FAST and dead_url in str(error)


@pytest.mark.parametrize(("kind", "fix"), ENDPOINTS)
def test_the_command_exits_non_zero_with_one_line(
    kind: str, fix: str, dead_url: str, refusing: RefusingKeyServer, tmp_path: Path, capsys: Any
) -> None:
    require_extras("audit")
    url = dead_url if kind == "dead" else refusing.base_url
    argv = ["audit", "run", "--judge", "openai:judge-model", "--judge-base-url", url, "--judge-api-key", "k"]
    argv += ["--set", "math", "--n", "6", "--out", str(tmp_path / "run"), "--no-progress"]
    started = time.monotonic()
    status = main(argv)
    elapsed = time.monotonic() - started
    captured = capsys.readouterr()
    naming = [line for line in captured.err.splitlines() if url in line]
    assert status != 0 and elapsed < FAST, (status, elapsed)
    assert len(naming) == 1 and fix in naming[0] and "Traceback" not in captured.err, captured.err
    assert "no bias flagged" not in captured.out.lower()


def test_rlaif_pairs_fail_at_once_on_a_dead_judge(dead_url: str, tmp_path: Path) -> None:
    from rewardsmith.constitutions.loader import load_constitution
    from rewardsmith.constitutions.pairs import PairsConfig
    from rewardsmith.constitutions.prompts import PromptItem
    from rewardsmith.constitutions.runners import run_pairs

    items = [PromptItem(index=i, prompt_id=f"p{i}", prompt=f"q{i}", candidates=(f"x{i}", f"y{i}")) for i in range(8)]
    constitution = load_constitution("honest-concise")
    error, elapsed = timed(
        lambda: run_pairs(
            items, tmp_path, judge=judge_at(dead_url), constitution=constitution, config=PairsConfig(), progress=False
        )
    )
    assert elapsed < FAST and dead_url in str(error) and "--judge-base-url" in str(error)


def test_a_rate_limited_endpoint_passes_the_check(tmp_path: Path) -> None:
    """429 means alive and keyed: the work's own retries pace it, so the check does not stop the run."""
    items = generate_set("math", 2, seed=0)
    with FaultServer(default_answer="A") as server:
        server.push("429", "429")
        client = make_client("openai", model="m", base_url=server.base_url, api_key="k", max_retries=1)
        summary = AuditRunner(PairwiseJudge(client), items, tmp_path / "run", progress=False).run()
    assert summary.judged == 2 and summary.failed == 0


# -- the headline of a run that judged nothing, or little -------------------------------------------------


def fail_items(server: FaultServer, failing: list[Any]) -> None:
    """Every order of the ``failing`` items is answered 400 (not retried): the check passes, those tasks fail."""
    for item in failing:
        server.push_when(item.prompt, "400", "400")


@pytest.mark.parametrize(("n_failing", "headline"), [(4, "NOTHING JUDGED"), (3, "MOST OF THE AUDIT NOT JUDGED")])
def test_a_run_that_judged_little_says_so_in_its_headline_and_exits_non_zero(
    n_failing: int, headline: str, tmp_path: Path, capsys: Any
) -> None:
    require_extras("audit")
    set_path = tmp_path / "set.jsonl"
    assert main(["audit", "make-set", "--set", "math", "--n", "4", "--seed", "0", "--out", str(set_path)]) == 0
    from rewardsmith.heldout.sets import read_set

    items = read_set(set_path)
    out = tmp_path / "run"
    with FaultServer(default_answer="A") as server:
        fail_items(server, items[:n_failing])
        argv = ["audit", "run", "--judge", "openai:m", "--judge-base-url", server.base_url, "--judge-api-key", "k"]
        argv += ["--max-retries", "0", "--perturb", "none", "--set", str(set_path), "--out", str(out), "--no-progress"]
        argv += ["--n-boot", "100"]
        capsys.readouterr()
        status = main(argv)
    captured = capsys.readouterr()
    assert status != 0
    assert headline in captured.err and "no bias flagged" not in captured.out.lower()
    summary = (out / "summary.md").read_text()
    assert summary.splitlines()[2].startswith(f"**{headline}") and "no bias flagged" not in summary.lower()
    html = (out / "report.html").read_text()
    assert headline in html.split("<h2>")[0] and "No bias flagged" not in html
    assert main(["audit", "report", str(out), "--n-boot", "100"]) != 0  # re-rendering says it again


RUN = {"runs": [{"tasks": 10, "errors": ["i1|none: HTTP 400"]}]}
# (metrics, headline or None, why)
COVERAGE = [
    ({"n_items": 10, "n_judged": 0, "run": {**RUN, "failed_now": 10}}, "NOTHING JUDGED", "every task failed"),
    ({"n_items": 10, "n_judged": 0, "run": {}}, "NOTHING JUDGED", "no verdicts and no record"),
    ({"n_items": 10, "n_judged": 4, "run": {**RUN, "failed_now": 6}}, "MOST OF THE AUDIT NOT JUDGED", "6 of 10"),
    ({"n_items": 10, "n_judged": 5, "run": {**RUN, "failed_now": 5}}, None, "half judged: findings with a count"),
    ({"n_items": 10, "n_judged": 10, "run": {**RUN, "failed_now": 0}}, None, "all judged"),
    ({"n_items": 10, "n_judged": 10, "run": {"runs": [{"tasks": 10}], "failed_now": 0}}, None, "all reused"),
]


@pytest.mark.parametrize(("metrics", "headline", "why"), COVERAGE)
def test_coverage_headline(metrics: dict[str, Any], headline: str | None, why: str) -> None:
    from rewardsmith.audit.report import render_markdown

    problem = coverage_problem(metrics)
    markdown = render_markdown({**metrics, "flags": []})
    if headline is None:
        assert problem is None and "no bias flagged" in markdown, why
    else:
        assert problem and problem.startswith(headline), why
        assert "no bias flagged" not in markdown.lower() and headline in markdown.splitlines()[2], why
