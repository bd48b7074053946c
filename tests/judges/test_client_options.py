"""A judge client's options are declared once, in its kind's options model (``rewardsmith.judges.clients.options``):
every field is a ``make_client`` keyword, a YAML key and (where it is marked) a flag of every command that builds a
client, and it reaches the transport; a new client kind is its own module plus one table line (or an entry point),
which the factory, YAML configs and the command line pick up without another edit."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from rewardsmith.cli.clients import client_flags, client_from_args, client_specs, parse_client_spec, spec_help
from rewardsmith.cli.main import build_parser
from rewardsmith.judges.base import ChatParams
from rewardsmith.judges.clients.embedded import SERVER_MODEL_NAME
from rewardsmith.judges.clients.factory import JUDGE_CLIENTS, JudgeClientConfig, make_client, options_class
from rewardsmith.judges.clients.openai_compat import OpenAIChatClient, OpenAIOptions
from rewardsmith.judges.clients.options import ClientOptions, flag_of
from rewardsmith.judges.clients.transformers_local import TransformersChatClient
from rewardsmith.plugins import Plugin
from tests.support.echo_client import EchoChatClient

REPO = Path(__file__).parents[2]
URL = "http://127.0.0.1:9/v1"  # never contacted: nothing here sends a request to it

#: one value per common option, none of them its default (a new option needs a row here: see the first test)
VALUES: dict[str, Any] = {
    "model": "m",
    "base_url": URL,
    "api_key": "k",
    "cache_dir": "judge-cache",
    "timeout": 7.5,
    "max_retries": 2,
    "rpm": 30.0,
    "tpm": 9000.0,
    "concurrency": 3,
    "prices": {"m": {"input": 1.0, "output": 2.0}},
}
#: the text of each value on the command line
TEXT = {name: str(value) for name, value in VALUES.items()}

# (command line without the client options, the role whose client it builds)
CLIENT_COMMANDS = [
    (["judge", "pair", "--prompt", "p", "--a", "x", "--b", "y"], "judge"),
    (["rlaif", "pairs", "--demo", "--out", "o"], "judge"),
    (["rlaif", "pairs", "--demo", "--out", "o"], "policy"),
    (["rlaif", "revise", "--demo", "--out", "o"], "reviser"),
    (["audit", "run", "--out", "o"], "judge"),
]

# (kind, options given, transport class, transport attributes that must carry them)
TRANSPORTS = [
    ("openai", {"model": "m", "base_url": URL, "api_key": "k", "timeout": 7.5, "max_retries": 2}, OpenAIChatClient,
     {"model": "m", "base_url": URL, "api_key": "k", "timeout": 7.5, "max_retries": 2}),
    ("embedded", {"base_url": URL, "timeout": 7.5, "max_retries": 2}, OpenAIChatClient,
     {"model": SERVER_MODEL_NAME, "base_url": URL, "timeout": 7.5, "max_retries": 2}),
    ("transformers", {"model": "/models/tiny"}, TransformersChatClient,
     {"model_path": "/models/tiny", "model": "tiny"}),
]  # fmt: skip


def _flag(role: str, name: str) -> str:
    scope = flag_of(ClientOptions.model_fields[name]).scope
    return f"--{role}-{name}".replace("_", "-") if scope == "role" else f"--{name}".replace("_", "-")


def _expected(name: str) -> Any:
    """The value as the options model holds it (prices become Price models)."""
    return getattr(OpenAIOptions(**{"model": "m", name: VALUES[name]}), name)


def test_the_table_of_values_covers_every_option_and_none_is_a_default():
    assert set(VALUES) == set(ClientOptions.model_fields)
    for name, info in ClientOptions.model_fields.items():
        assert VALUES[name] != info.default, name


@pytest.mark.parametrize("name", list(VALUES))
def test_every_option_is_a_make_client_keyword_and_a_yaml_key(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the cache directory is made under it
    given = {"model": "m", name: VALUES[name]}
    client = make_client("openai", **given)
    assert getattr(client.options, name) == _expected(name)
    from_yaml = JudgeClientConfig.model_validate({"backend": "openai", **given}).build()
    assert getattr(from_yaml.options, name) == _expected(name)
    from rewardsmith.registry import get_reward

    reward = get_reward("llm_judge", {"client": {"backend": "openai", **given}})
    assert getattr(reward.config.client.options(), name) == _expected(name)


@pytest.mark.parametrize(("argv", "role"), CLIENT_COMMANDS)
def test_every_option_is_on_every_client_command(argv, role, tmp_path):
    flagged = {name for name, info in ClientOptions.model_fields.items() if flag_of(info) is not None}
    unflagged = set(ClientOptions.model_fields) - flagged
    # an option without a flag is given by the command itself, through client_from_args
    assert unflagged == {"cache_dir", "concurrency", "prices"}
    assert unflagged <= set(inspect.signature(client_from_args).parameters)

    options = [item for name in sorted(flagged - {"model"}) for item in (_flag(role, name), TEXT[name])]
    args = build_parser().parse_args([*argv, f"--{role}", "openai:m", *options])
    command = {"cache_dir": tmp_path / "cache", "concurrency": 3, "prices": VALUES["prices"]}
    client = client_from_args(args, role, **command)
    for name in ClientOptions.model_fields:
        expected = str(tmp_path / "cache") if name == "cache_dir" else _expected(name)
        assert getattr(client.options, name) == expected, name


@pytest.mark.parametrize(("kind", "given", "transport_class", "attributes"), TRANSPORTS, ids=[t[0] for t in TRANSPORTS])
def test_each_kind_hands_its_options_to_its_transport(kind, given, transport_class, attributes):
    transport = make_client(kind, **given).transport
    assert type(transport) is transport_class
    assert {name: getattr(transport, name) for name in attributes} == attributes


def test_every_kind_in_the_table_is_built_covered_and_says_whether_it_needs_a_model():
    assert {kind for kind, *_ in TRANSPORTS} == set(JUDGE_CLIENTS.names())
    for kind, spec in zip(JUDGE_CLIENTS.names(), client_specs(), strict=True):
        required = options_class(kind).model_required()
        assert (":" in spec) == required, spec
        if required:
            with pytest.raises(ValueError, match=rf"backend '{kind}' needs a model"):
                make_client(kind)
            with pytest.raises(ValueError, match=rf"--judge '{kind}': use {spec_help()}"):
                parse_client_spec(kind)


def test_make_client_takes_keywords_or_an_options_model(tmp_path):
    prices = VALUES["prices"]
    client = make_client(
        "openai", model="m", base_url=URL, api_key="k", cache_dir=tmp_path, rpm=30, tpm=9000, concurrency=3,
        prices=prices, timeout=7.5, max_retries=2,
    )  # fmt: skip
    held = client.options.model_dump()
    assert held == {**VALUES, "cache_dir": str(tmp_path)}
    assert (client.transport.api_key, client.limiter.rpm, client.limiter.tpm) == ("k", 30, 9000)
    assert make_client(OpenAIOptions(model="m", timeout=3)).transport.timeout == 3
    config = JudgeClientConfig(backend="openai", model="m", max_retries=1)
    assert make_client(config).transport.max_retries == 1
    with pytest.raises(TypeError, match="positional argument"):
        make_client("openai", "m")  # type: ignore[misc]
    with pytest.raises(TypeError, match="takes no other arguments"):
        make_client(OpenAIOptions(model="m"), timeout=3)


def test_an_option_a_kind_does_not_take_fails_loudly():
    with pytest.raises(ValidationError, match="prefix"):
        make_client("openai", model="m", prefix="> ")  # the echo kind's option, not openai's
    with pytest.raises(ValidationError, match="prefix"):
        JudgeClientConfig(backend="openai", model="m", prefix="> ")
    with pytest.raises(ValidationError, match="timeout"):
        make_client("openai", model="m", timeout=0)


def test_a_new_kind_is_one_table_line_the_factory_and_the_command_line_read(monkeypatch):
    JUDGE_CLIENTS.names()  # the table loaded: the line below is added as a built-in line would be
    monkeypatch.setitem(JUDGE_CLIENTS.entries, "echo", Plugin("echo", "tests.support.echo_client:EchoOptions"))
    assert client_specs() == ["embedded", "openai:MODEL", "transformers:PATH", "echo:NAME"]
    assert parse_client_spec("echo:bob") == ("echo", "bob")
    with pytest.raises(ValueError, match="echo:NAME"):
        parse_client_spec("echo")  # its options model requires a name
    assert "prefix" in client_flags("role")

    client = make_client("echo", model="bob", prefix="> ", timeout=3)
    assert isinstance(client.transport, EchoChatClient) and client.transport.timeout == 3
    assert client.complete([{"role": "user", "content": "hi"}], ChatParams(max_tokens=4)).text == "> hi"

    for argv, role in CLIENT_COMMANDS:
        parser = build_parser()
        args = parser.parse_args([*argv, f"--{role}", "echo:bob", f"--{role}-prefix", "> ", "--timeout", "3"])
        built = client_from_args(args, role, cache_dir=None)
        assert (built.transport.model, built.transport.prefix, built.transport.timeout) == ("bob", "> ", 3)
        assert _help(parser, argv, f"--{role}-prefix").endswith(": text put before every answer")
        wrong_kind = parser.parse_args([*argv, f"--{role}", "openai:m", f"--{role}-prefix", "> "])
        with pytest.raises(ValidationError, match="prefix"):
            client_from_args(wrong_kind, role, cache_dir=None)


def _help(parser: argparse.ArgumentParser, argv: list[str], option: str) -> str:
    for name in argv[:2]:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser._option_string_actions[option].help or ""


PROBE = """
import json

from rewardsmith.cli.clients import client_from_args, client_specs
from rewardsmith.cli.main import build_parser
from rewardsmith.judges.base import ChatParams
from rewardsmith.judges.clients.factory import JUDGE_CLIENTS, JudgeClientConfig
from rewardsmith.registry import get_reward

asked = [{"role": "user", "content": "hi"}]
params = ChatParams(max_tokens=4)
config = JudgeClientConfig.model_validate({"backend": "echo", "model": "bob", "prefix": "> "})
callable_kind = JudgeClientConfig(backend="echo_fn", base_url="http://127.0.0.1:9/v1", timeout=5).build()
reward = get_reward("llm_judge", {"client": {"backend": "echo", "model": "bob", "prefix": "yaml: "}})
args = build_parser().parse_args(["judge", "pair", "--prompt", "p", "--a", "x", "--b", "y",
                                  "--judge", "echo:cli", "--judge-prefix", "cli: "])
try:
    JudgeClientConfig(backend="echo")
    refused = None
except ValueError as exc:
    refused = str(exc)
print(json.dumps({
    "names": list(JUDGE_CLIENTS.names()),
    "specs": client_specs(),
    "yaml": config.build().complete(asked, params).text,
    "reward": reward.config.client.build().complete(asked, params).text,
    "callable": [callable_kind.complete(asked, params).text, callable_kind.transport.timeout,
                 callable_kind.transport.base_url],
    "cli": client_from_args(args, "judge", cache_dir=None).complete(asked, params).text,
    "refused": refused,
}))
"""


def test_a_package_adds_a_judge_client_through_the_entry_point_group(tmp_path):
    dist = tmp_path / "rk_echo_client-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rk-echo-client\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[rewardsmith.judge_clients]\n"
        "echo = tests.support.echo_client:EchoOptions\n"
        "echo_fn = tests.support.echo_client:echo_transport\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROBE)], capture_output=True, text=True, timeout=120, env=env, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["names"] == ["embedded", "openai", "transformers", "echo", "echo_fn"]
    assert seen["specs"] == ["embedded", "openai:MODEL", "transformers:PATH", "echo:NAME", "echo_fn"]
    assert (seen["yaml"], seen["reward"], seen["cli"]) == ("> hi", "yaml: hi", "cli: hi")
    assert seen["callable"] == ["fn: hi", 5, "http://127.0.0.1:9/v1"]
    assert "backend 'echo' needs the name the echo answers under" in seen["refused"]
