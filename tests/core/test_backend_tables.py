"""Backend kinds of the plugin registry: the CLI's choices, the configs' accepted values and the table agree, every
line points at a module that exists, and a package adds a backend through the kind's entry-point group alone."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

from rewardsmith.cli.clients import client_specs, parse_client_spec
from rewardsmith.cli.main import build_parser
from rewardsmith.judges.clients.factory import JUDGE_CLIENTS, JudgeClientConfig
from rewardsmith.judges.clients.reward_models import REWARD_MODELS
from rewardsmith.plugins import PluginKind
from rewardsmith.rewards.code.reward import CodeSandbox, CodeTestsConfig
from rewardsmith.sandboxes.factory import SANDBOXES, open_backend

REPO = Path(__file__).parents[2]


def _subparser(parser: argparse.ArgumentParser, *path: str) -> argparse.ArgumentParser:
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def _choices(parser: argparse.ArgumentParser, option: str) -> list[str]:
    return list(parser._option_string_actions[option].choices)


def _code_config(backend: str) -> CodeTestsConfig:
    extra = {"base_url": "http://127.0.0.1:9"} if SANDBOXES.get(backend).forwards else {}
    return CodeTestsConfig(backend=backend, **extra)


@pytest.mark.parametrize("table", [SANDBOXES, JUDGE_CLIENTS, REWARD_MODELS], ids=lambda t: t.kind)
def test_every_table_line_points_at_a_module_that_exists(table: PluginKind):
    for name in table.names():
        backend = table.get(name)
        if backend.from_entry_point:
            continue
        assert importlib.util.find_spec(backend.module) is not None, backend.target
        assert not backend.module_groups() or backend.install_hint(), f"{name}: needs packages but says no install"


def test_sandbox_cli_choices_config_values_and_table_agree():
    parser = build_parser()
    names = list(SANDBOXES.names())
    assert names == ["local", "docker", "remote"]
    assert _choices(_subparser(parser, "sandbox", "run"), "--backend") == names
    # serving the API on a backend that forwards to another server is not offered
    assert _choices(_subparser(parser, "sandbox", "serve"), "--backend") == [
        n for n in names if not SANDBOXES.get(n).forwards
    ]
    assert list(get_args(CodeSandbox.model_fields["backend"].annotation)) == names
    for name in names:
        assert _code_config(name).sandbox.backend == name
    with pytest.raises(ValidationError):
        CodeTestsConfig(backend="podman")


def test_judge_client_cli_specs_config_values_and_table_agree():
    names = list(JUDGE_CLIENTS.names())
    assert names == ["embedded", "openai", "transformers"]
    assert list(get_args(JudgeClientConfig.model_fields["backend"].annotation)) == names
    assert client_specs() == ["embedded", "openai:MODEL", "transformers:PATH"]
    for spec in client_specs():
        backend, model = parse_client_spec(spec)
        assert backend in names and model == (spec.partition(":")[2] or None)
    with pytest.raises(ValueError, match="use embedded, openai:MODEL or transformers:PATH"):
        parse_client_spec("anthropic:claude")
    with pytest.raises(ValueError, match="use embedded"):
        parse_client_spec("openai")  # a model is required
    judge_help = _subparser(build_parser(), "judge", "pair")._option_string_actions["--judge"].help
    assert "embedded, openai:MODEL or transformers:PATH" in judge_help
    with pytest.raises(ValidationError, match="needs a model name"):
        JudgeClientConfig(backend="openai")
    with pytest.raises(ValidationError):
        JudgeClientConfig(backend="anthropic")


def test_unknown_backend_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown sandbox backend 'podman'\. Known: local, docker, remote"):
        open_backend("podman")


PLUGIN = '''
from rewardsmith.sandboxes.base import SandboxBackend


class EchoSandbox(SandboxBackend):
    """A third-party backend as the table sees it: a class built with the caller's options."""

    name = "echo"

    def __init__(self, **options):
        self.options = options
'''

PROBE = """
import argparse
import json
from typing import get_args

from rewardsmith.cli.main import build_parser
from rewardsmith.rewards.code.reward import CodeSandbox, CodeTestsConfig
from rewardsmith.sandboxes.factory import SANDBOXES, open_backend

parser = build_parser()
for name in ("sandbox", "run"):
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    parser = action.choices[name]
print(json.dumps({
    "names": list(SANDBOXES.names()),
    "cli": list(parser._option_string_actions["--backend"].choices),
    "config": list(get_args(CodeSandbox.model_fields["backend"].annotation)),
    "accepted": CodeTestsConfig(backend="echo").sandbox.backend,
    "built": type(open_backend("echo", concurrency=3)).__name__,
    "options": open_backend("echo", offered={"isolation": "weak"}, concurrency=3).options,
}))
"""


def test_a_package_adds_a_sandbox_backend_through_the_entry_point_group(tmp_path):
    (tmp_path / "rk_echo_sandbox.py").write_text(textwrap.dedent(PLUGIN))
    dist = tmp_path / "rk_echo_sandbox-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rk-echo-sandbox\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[rewardsmith.sandboxes]\necho = rk_echo_sandbox:EchoSandbox\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["names"] == ["local", "docker", "remote", "echo"]
    assert seen["cli"] == seen["names"] and seen["config"] == seen["names"]
    assert seen["accepted"] == "echo" and seen["built"] == "EchoSandbox"
    assert seen["options"] == {"concurrency": 3}  # it lists no accepts_offered: offers do not reach it


def test_offered_options_reach_only_the_backends_that_take_them_and_never_override_given_ones():
    local = open_backend("local", offered={"isolation": "weak", "warm_modules": {"m": "X = 1"}})
    assert local.isolation == "weak" and local.warm_modules == {"m": "X = 1"}
    assert open_backend("local", offered={"isolation": "weak"}, isolation="strong").isolation == "strong"
    remote = open_backend("remote", offered={"isolation": "weak", "warm_modules": {}}, base_url="http://127.0.0.1:9")
    assert remote.name == "remote"  # its constructor takes neither: built without them, not a TypeError


def test_a_backend_line_with_only_an_extra_needs_that_extras_modules_and_names_its_install(monkeypatch):
    """The extra's modules are written once (rewardsmith.extras): the table derives what is missing and the fix."""
    import rewardsmith.extras as extras

    monkeypatch.setitem(extras.EXTRA_MODULES, "docker", ("rewardsmith_no_such_module",))
    assert SANDBOXES.missing_packages("docker") == (
        "sandbox backend 'docker' needs the 'docker' extra (rewardsmith_no_such_module missing): "
        "pip install 'rewardsmith[docker]'"
    )
    monkeypatch.setitem(extras.EXTRA_MODULES, "judge", ("rewardsmith_no_such_module",))
    assert JUDGE_CLIENTS.missing_packages("openai") == (
        "judge backend 'openai' needs the 'judge' extra (rewardsmith_no_such_module missing): "
        "pip install 'rewardsmith[judge]'"
    )
    monkeypatch.setitem(extras.EXTRA_MODULES, "docker", ("json",))
    assert SANDBOXES.missing_packages("docker") is None
