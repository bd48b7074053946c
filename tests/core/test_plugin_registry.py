"""One registry for every plugin kind (rewardsmith.plugins): one entry-point naming scheme, lazy lines that name
their extra, decorator registration, the same errors for an unknown name or a missing extra, and a package that adds
one plugin of every kind through entry points alone. Importing the rewards stays light: naming every plugin of every
kind imports no heavy dependency."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomllib

import rewardsmith.extras as extras
from rewardsmith.judges.clients.reward_models import REWARD_MODELS, open_reward_model, remote_protocols
from rewardsmith.plugins import KINDS, PluginKind, plugin_kind
from rewardsmith.reward_config import ConfigError

REPO = Path(__file__).parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_every_kind_has_one_group_named_after_it_and_pyproject_declares_only_those():
    groups = {plugin_kind(key).group for key in KINDS}
    assert groups == {f"rewardsmith.{key}" for key in KINDS}
    assert {plugin_kind(key).key for key in KINDS} == set(KINDS)
    declared = {group for group in PYPROJECT["entry-points"] if group.startswith("rewardsmith.")}
    assert declared <= groups, declared - groups


def test_every_line_names_an_extra_whose_modules_are_written_once():
    assert set(extras.EXTRA_MODULES) <= set(PYPROJECT["optional-dependencies"])
    for key in KINDS:
        kind = plugin_kind(key)
        for name in kind.names():
            plugin = kind.get(name)
            assert set(plugin.extras) <= set(extras.EXTRA_MODULES), (key, name)
            assert plugin.module_groups() == tuple(extras.EXTRA_MODULES[e] for e in plugin.extras)
            if plugin.extras:
                assert plugin.install_hint().endswith(extras.install_command(plugin.extras[0])), (key, name)


LIGHT = """
import json, sys
import rewardsmith.rewards
from rewardsmith.plugins import KINDS, plugin_kind
from rewardsmith.registry import list_rewards

list_rewards()
names = {key: plugin_kind(key).names() for key in KINDS}
heavy = ["torch", "transformers", "openai", "docker", "rewardsmith.sandboxes.docker.backend",
         "rewardsmith.judges.clients.openai_compat", "rewardsmith.judges.clients.transformers_local"]
print(json.dumps({"names": names, "imported": [m for m in heavy if m in sys.modules]}))
"""


def test_importing_the_rewards_and_naming_every_plugin_imports_nothing_heavy():
    proc = subprocess.run([sys.executable, "-c", LIGHT], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["imported"] == []
    assert "docker" in seen["names"]["sandboxes"] and "openai" in seen["names"]["judge_clients"]


def test_a_missing_extra_names_the_install_in_every_kind(monkeypatch):
    monkeypatch.setitem(extras.EXTRA_MODULES, "judge-local", ("rk_absent_torch",))
    monkeypatch.setitem(extras.EXTRA_MODULES, "judge", ("rk_absent_openai",))
    assert plugin_kind("judge_clients").missing_packages("embedded") == (
        "judge backend 'embedded' needs the 'judge-local' extra (rk_absent_torch missing) or the 'judge' extra "
        "(rk_absent_openai missing): pip install 'rewardsmith[judge-local]'"
    )
    assert REWARD_MODELS.missing_packages("local") == (
        "reward model client 'local' needs the 'judge-local' extra (rk_absent_torch missing): "
        "pip install 'rewardsmith[judge-local]'"
    )
    assert REWARD_MODELS.missing_packages("openrlhf") is None  # it needs nothing beyond the core
    monkeypatch.setitem(extras.EXTRA_MODULES, "judge", ("json",))
    assert plugin_kind("judge_clients").missing_packages("embedded") is None  # any one of its extras is enough

    scratch: PluginKind[object] = PluginKind("sandboxes", "sandbox backend")
    scratch.declare("ghost", "rk_no_such_module:Ghost", extra="judge-local")
    with pytest.raises(ConfigError) as caught:
        scratch.load("ghost")
    assert str(caught.value) == (
        "sandbox backend 'ghost' is unavailable: No module named 'rk_no_such_module' (sandbox backend 'ghost' needs "
        "the 'judge-local' extra (rk_absent_torch missing): pip install 'rewardsmith[judge-local]')"
    )
    with pytest.raises(ValueError, match="unknown extra 'nope'"):
        scratch.declare("typo", "json:loads", extra="nope")


@pytest.mark.parametrize("key", list(KINDS))
def test_an_unknown_name_reads_the_same_in_every_kind(key):
    kind = plugin_kind(key)
    first = kind.names()[0]
    with pytest.raises(ConfigError) as caught:
        kind.get(first + "x")
    assert str(caught.value).startswith(f"unknown {kind.kind} '{first}x'. Did you mean '{first}'")
    assert f"Known: {', '.join(kind.names())}" in str(caught.value)


class Filled:
    """A class a line names, registered by its decorator when its module is imported."""


def test_decorators_and_lines_register_alike():
    scratch: PluginKind[type] = PluginKind("judge_clients", "judge backend")

    @scratch.decorator("mine", extra="judge")
    class Mine:
        pass

    assert scratch.load("mine") is Mine and scratch.get("mine").loaded
    assert scratch.get("mine").extras == ("judge",) and scratch.get("mine").target == f"{__name__}:{Mine.__qualname__}"
    with pytest.raises(ValueError, match=r"'mine' is already registered by .*Mine"):
        scratch.register("mine", Filled)
    scratch.declare("filled", f"{__name__}:Filled")
    assert not scratch.get("filled").loaded
    assert scratch.decorator("filled")(Filled) is Filled  # the decorator fills the line that names it
    assert scratch.load("filled") is Filled
    with pytest.raises(TypeError, match="needs a name"):
        scratch.decorator()(Filled)


def test_reward_model_clients_are_chosen_through_their_table():
    from typing import get_args

    from rewardsmith.judges.reward_model import REMOTE_PROTOCOLS, RemoteRewardModel, VLLMRewardModel
    from rewardsmith.rewards.judge_reward_model import RewardModelConfig

    assert remote_protocols() == REMOTE_PROTOCOLS
    assert get_args(RewardModelConfig.model_fields["protocol"].annotation) == ("auto", *remote_protocols())
    assert isinstance(open_reward_model("http://h:5000/get_reward"), RemoteRewardModel)
    scorer = open_reward_model("http://h/rm", protocol="vllm-pooling", timeout=3, max_retries=1, batch_size=2)
    assert isinstance(scorer, VLLMRewardModel) and scorer.endpoint == "pooling"
    assert isinstance(open_reward_model("http://h/v1/classify"), VLLMRewardModel)
    with pytest.raises(ValueError, match="needs an http"):
        open_reward_model(".", protocol="openrlhf")


PLUGIN = """
from rewardsmith import Reward, RewardResult
from rewardsmith.hackaudit.attacks.base import Attack
from rewardsmith.sandboxes.base import SandboxBackend


class AnyReward(Reward):
    name = "any_reward"

    def score_one(self, completion, row):
        return RewardResult(score=1.0, reason="")


class AnyAttack(Attack):
    family = "format"
    kinds = ("format",)
    description = "says nothing"

    def generate(self, ctx):
        return [""]


class AnySandbox(SandboxBackend):
    name = "rk_any"

    def __init__(self, **options):
        self.options = options


def any_transport(model="m"):
    return model


class AnyRewardModel:
    def __init__(self, url, *, timeout=1.0):
        self.url, self.timeout = url, timeout
"""

PROBE = """
import json
from rewardsmith import get_reward
from rewardsmith.hackaudit.attacks import get_attack
from rewardsmith.judges.clients.reward_models import open_reward_model
from rewardsmith.plugins import KINDS, plugin_kind
from rewardsmith.sandboxes.factory import open_backend

scorer = open_reward_model("http://h/x", protocol="rk_any", timeout=4, served_model="ignored")
print(json.dumps({
    "listed": {key: "rk_any" in plugin_kind(key).names() for key in KINDS},
    "groups": {key: plugin_kind(key).get("rk_any").origin for key in KINDS},
    "reward": get_reward("rk_any")(["x"]),
    "attack": get_attack("rk_any").name,
    "sandbox": open_backend("rk_any", concurrency=2).options,
    "judge": plugin_kind("judge_clients").load("rk_any")(),
    "reward_model": [type(scorer).__name__, scorer.url, scorer.timeout],
}))
"""


def test_a_package_adds_one_plugin_of_every_kind_through_entry_points(tmp_path):
    (tmp_path / "rk_any_plugin.py").write_text(textwrap.dedent(PLUGIN))
    dist = tmp_path / "rk_any_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rk-any-plugin\nVersion: 0.1\n")
    targets = {
        "rewards": "AnyReward",
        "attacks": "AnyAttack",
        "sandboxes": "AnySandbox",
        "judge_clients": "any_transport",
        "reward_models": "AnyRewardModel",
    }
    assert set(targets) == set(KINDS)
    (dist / "entry_points.txt").write_text(
        "".join(f"[rewardsmith.{key}]\nrk_any = rk_any_plugin:{attr}\n\n" for key, attr in targets.items())
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["listed"] == dict.fromkeys(KINDS, True)
    assert seen["groups"] == dict.fromkeys(KINDS, "rk-any-plugin")
    assert seen["reward"] == [1.0] and seen["attack"] == "rk_any"
    assert seen["sandbox"] == {"concurrency": 2} and seen["judge"] == "m"
    assert seen["reward_model"] == ["AnyRewardModel", "http://h/x", 4]
