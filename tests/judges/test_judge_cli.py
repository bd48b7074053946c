"""The judge options every command that builds a model client shares: one spelling for request limits
(``--timeout``, ``--max-retries``, ``--rpm``, ``--tpm``) and for how the pairwise judge reads
(``--template``, ``--no-logprobs``, ``--cot``), checked on the real parser, the real clients and a real
HTTP endpoint on 127.0.0.1."""

from __future__ import annotations

import json
import time

import pytest

from rewardsmith.cli.clients import client_from_args, pairwise_judge_from_args
from rewardsmith.cli.main import build_parser, main
from tests.support.judge_prompts import shown_as

# (command line without the client options, the role whose client it builds)
CLIENT_COMMANDS = [
    (["judge", "pair", "--prompt", "p", "--a", "x", "--b", "y"], "judge"),
    (["rlaif", "pairs", "--demo", "--out", "o"], "judge"),
    (["rlaif", "pairs", "--demo", "--out", "o"], "policy"),
    (["rlaif", "revise", "--demo", "--out", "o"], "reviser"),
    (["audit", "run", "--out", "o"], "judge"),
]
JUDGE_COMMANDS = [argv for argv, role in CLIENT_COMMANDS if role == "judge"]
REQUEST_OPTIONS = ["--timeout", "7.5", "--max-retries", "2", "--rpm", "30", "--tpm", "9000"]


@pytest.mark.parametrize(("argv", "role"), CLIENT_COMMANDS)
def test_every_client_command_takes_the_request_options(argv, role):
    args = build_parser().parse_args([*argv, f"--{role}", "openai:m", *REQUEST_OPTIONS])
    client = client_from_args(args, role, cache_dir=None)
    assert (client.transport.timeout, client.transport.max_retries) == (7.5, 2)
    assert (client.limiter.rpm, client.limiter.tpm) == (30, 9000)

    defaults = client_from_args(build_parser().parse_args([*argv, f"--{role}", "openai:m"]), role, cache_dir=None)
    assert (defaults.transport.timeout, defaults.transport.max_retries) == (60.0, 4)
    assert not defaults.limiter.active


@pytest.mark.parametrize("bad", [["--timeout", "0"], ["--max-retries", "-1"], ["--rpm", "fast"], ["--tpm", "-5"]])
def test_bad_request_options_are_usage_errors(bad, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["judge", "pair", "--prompt", "p", "--a", "x", "--b", "y", *bad])
    assert exit_info.value.code == 2
    assert bad[0] in capsys.readouterr().err


@pytest.mark.parametrize("argv", JUDGE_COMMANDS)
@pytest.mark.parametrize(
    "spelling",
    [["--template", "pairwise_cot", "--cot"], ["--judge-template", "pairwise_cot", "--chain-of-thought"]],
)
def test_every_judge_command_configures_the_pairwise_judge_alike(argv, spelling, tmp_path):
    args = build_parser().parse_args(
        [*argv, "--judge", "openai:m", *spelling, "--no-logprobs", "--cot-clamp", "0.3", "0.7"]
    )
    judge = pairwise_judge_from_args(args, client_from_args(args, "judge", cache_dir=None), state_dir=tmp_path)
    assert (judge.template, judge.chain_of_thought, judge.use_logprobs) == ("pairwise_cot", True, False)
    assert judge.cot_clamp == (0.3, 0.7)
    assert judge.params.top_logprobs == 0


def test_judge_pair_stdout_is_json_and_failures_exit_1(fault_server, capsys):
    fault_server.push_when(shown_as("response-A", "4"), "500")
    argv = ["judge", "pair", "--judge", "openai:m", "--judge-base-url", fault_server.base_url,
            "--prompt", "2+2?", "--a", "4", "--b", "5", "--max-retries", "0"]  # fmt: skip
    assert main(argv) == 1
    captured = capsys.readouterr()
    verdict = json.loads(captured.out)
    assert verdict["abstained"] and verdict["ab"]["source"] == "error" and "HTTP 500" in verdict["ab"]["reason"]
    assert verdict["usage"]["errors"] == 1 and verdict["usage"]["retries"] == 0
    assert len(fault_server.requests) == 2  # no retry with --max-retries 0
    assert "1 judge call(s) failed" in captured.err and "2 sent" in captured.err


def test_judge_pair_timeout_bounds_a_stuck_endpoint(fault_server, capsys):
    fault_server.sleep_s = 6.0
    fault_server.push_when(shown_as("response-A", "4"), "timeout")  # the server sleeps 6 s before answering
    argv = ["judge", "pair", "--judge", "openai:m", "--judge-base-url", fault_server.base_url,
            "--prompt", "2+2?", "--a", "4", "--b", "5", "--timeout", "0.4", "--max-retries", "0"]  # fmt: skip
    started = time.monotonic()
    assert main(argv) == 1
    assert time.monotonic() - started < fault_server.sleep_s / 2  # gave up after --timeout, not the server's sleep
    assert "timeout" in json.loads(capsys.readouterr().out)["ab"]["reason"]
