"""Reward spec files are untrusted: they name files only in their own folder, import nothing, and fail in one line.

A judge reward sends its template's text to the spec's endpoint, so a template reference is a way to read any host
file out; an import path runs code. Every reader of a spec file (``grpo_rewards(path)``, ``rewardsmith serve
--spec`` and ``--monitor-shadow @FILE``, ``audit reward --spec``, the verifiers adapter, verl's mapping file) must
refuse both before building anything, naming the file and the field. YAML mistakes in any of them are one line with
file, line and column.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith.adapters.runtime.serve.specs import load_served
from rewardsmith.adapters.trainers.trl import grpo_rewards
from rewardsmith.adapters.trainers.verifiers.terms import _entries
from rewardsmith.adapters.trainers.verl import load_mapping
from rewardsmith.cli.serve import shadow_spec
from rewardsmith.hackaudit.runner import load_raw_spec
from rewardsmith.reward import ConfigError

CLIENT = "{backend: openai, model: m, base_url: 'http://127.0.0.1:9/v1'}"
TEMPLATE = "[user]\n{{ prompt }} {{ first }} {{ second }}\n"


def judge_spec(template: str, *, key: str = "template") -> str:
    return f"rewards:\n  - name: llm_judge\n    config: {{mode: pairwise, client: {CLIENT}, {key}: {template!r}}}\n"


def gated_spec(template: str) -> str:
    return (
        "rewards:\n  - name: think_format\n"
        f"    gate: {{name: llm_judge, config: {{mode: pairwise, client: {CLIENT}, template: {template!r}}}}}\n"
    )


def rubric_spec(path: str) -> str:
    return f"rewards:\n  - name: llm_rubric\n    config: {{client: {CLIENT}, criteria_file: {path!r}}}\n"


def make_tree(tmp_path: Path) -> Path:
    """``outside/secret.jinja`` (a host file) beside ``spec/`` (the spec's folder, with a symlink out of it)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jinja").write_text(TEMPLATE + "SECRET\n")
    (outside / "secret.yaml").write_text("criteria: [{id: c, description: SECRET}]\n")
    folder = tmp_path / "spec"
    (folder / "prompts").mkdir(parents=True)
    (folder / "prompts" / "mine.jinja").write_text(TEMPLATE)
    (folder / "link.jinja").symlink_to(outside / "secret.jinja")
    (folder / "prompts" / "up").symlink_to(outside)
    return folder


# (spec text, fragment of the one-line error, what it attacks); {out} is the absolute path of outside/
HOSTILE = [
    (judge_spec("{out}/secret.jinja"), "rewards.0.config.template: '{out}/secret.jinja' is an absolute path", "abs"),
    (judge_spec("/etc/passwd.jinja"), "rewards.0.config.template: '/etc/passwd.jinja' is an absolute path", "etc"),
    (judge_spec("~/.ssh/id_ed25519.jinja"), "rewards.0.config.template: '~/.ssh/id_ed25519.jinja' is an absolute", "~"),
    (judge_spec("../outside/secret.jinja"), "rewards.0.config.template: '../outside/secret.jinja' leads outside", ".."),
    (judge_spec("prompts/../../outside/secret.jinja"), "leads outside the spec's folder", "inner .."),
    (judge_spec("link.jinja"), "rewards.0.config.template: 'link.jinja' leads outside", "symlinked file"),
    (judge_spec("prompts/up/secret.jinja"), "'prompts/up/secret.jinja' leads outside", "symlinked folder"),
    (gated_spec("../outside/secret.jinja"), "rewards.0.gate.config.template: '../outside/secret.jinja'", "in a gate"),
    (rubric_spec("{out}/secret.yaml"), "rewards.0.config.criteria_file: '{out}/secret.yaml' is an absolute", "rubric"),
    (
        rubric_spec("../outside/secret.yaml"),
        "rewards.0.config.criteria_file: '../outside/secret.yaml' leads",
        "rubric ..",
    ),
    (judge_spec("missing.jinja"), "rewards.0.config.template: no such file 'missing.jinja'", "missing file"),
]


def readers():
    """Every public way a spec file is read, as ``path -> anything``."""
    return {
        "grpo_rewards": grpo_rewards,
        "serve": load_served,
        "audit": load_raw_spec,
        "verifiers": lambda path: _entries(str(path), "spec"),
        "serve_shadow": lambda path: shadow_spec(f"@{path}"),
        "verl_mapping": load_mapping,
    }


@pytest.mark.parametrize("reader", sorted(readers()))
@pytest.mark.parametrize(("text", "fragment", "attack"), HOSTILE, ids=[attack for _, _, attack in HOSTILE])
def test_file_reference_leaving_the_spec_folder_is_refused_naming_file_and_field(
    tmp_path, reader, text, fragment, attack
):
    folder = make_tree(tmp_path)
    out = str(tmp_path / "outside")
    spec = folder / "rewards.yaml"
    spec.write_text(text.replace("{out}", out))
    with pytest.raises(ConfigError) as caught:
        readers()[reader](spec)
    message = str(caught.value)
    assert message.startswith(f"{spec}: ") and "\n" not in message
    assert fragment.replace("{out}", out) in message


def test_file_in_the_spec_folder_is_used_whatever_the_working_directory(tmp_path, monkeypatch):
    folder = make_tree(tmp_path)
    spec = folder / "rewards.yaml"
    spec.write_text(judge_spec("prompts/mine.jinja") + "  - name: think_format\n")
    monkeypatch.chdir(tmp_path / "outside")
    funcs, weights = grpo_rewards(spec)
    assert weights == [1.0, 1.0]
    assert funcs[0].config.template == str((folder / "prompts" / "mine.jinja").resolve())
    served = load_served(spec)
    assert served["llm_judge"].reward.config.template == funcs[0].config.template


def test_packaged_template_names_stay_names_and_cannot_walk_out(tmp_path):
    from importlib import resources

    from rewardsmith.judges.templates import TemplateError, template_text

    spec = tmp_path / "rewards.yaml"
    spec.write_text(judge_spec("pairwise_cot"))
    funcs, _ = grpo_rewards(spec)
    assert funcs[0].config.template == "pairwise_cot"
    # a "name" that walks from the packaged prompts folder to any *.jinja file on the host
    (tmp_path / "secret.jinja").write_text(TEMPLATE + "SECRET\n")
    prompts = Path(str(resources.files("rewardsmith.judges") / "prompts"))
    walk = os.path.relpath(tmp_path / "secret", prompts)
    with pytest.raises(TemplateError, match="no prompt template"):
        template_text(walk)


EVIL_MODULE = """
from pathlib import Path
from pydantic import BaseModel
Path({marker!r}).write_text("imported")
class Model(BaseModel):
    name: str
"""


@pytest.mark.parametrize("reader", sorted(readers()))
def test_spec_cannot_make_the_loader_import_a_module(tmp_path, monkeypatch, reader):
    marker = tmp_path / "ran"
    module = f"rewardsmith_spec_evil_{reader}"
    (tmp_path / f"{module}.py").write_text(EVIL_MODULE.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(tmp_path))  # importable, as a module in the working directory would be
    spec = tmp_path / "rewards.yaml"
    spec.write_text(
        f"rewards:\n  - think_format\n  - {{name: json_schema, config: {{pydantic_model: '{module}:Model'}}}}\n"
    )
    with pytest.raises(ConfigError) as caught:
        readers()[reader](spec)
    assert f"{spec}: rewards.1.config.pydantic_model: '{module}:Model' would import module" in str(caught.value)
    assert not marker.exists()
    assert module not in sys.modules


def test_imports_are_allowed_when_the_caller_says_so_or_already_done(tmp_path, monkeypatch):
    from rewardsmith.adapters.spec import load_spec

    module = "rewardsmith_spec_allowed"
    marker = tmp_path / "ran"
    (tmp_path / f"{module}.py").write_text(EVIL_MODULE.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = tmp_path / "rewards.yaml"
    spec.write_text(f"rewards:\n  - {{name: json_schema, config: {{pydantic_model: '{module}:Model'}}}}\n")
    try:
        reward = load_spec(spec, allow_imports=True).combined()
        assert marker.exists()
        assert reward(['{"name": "x"}'])[0] == 1.0
        assert load_spec(spec).combined()(['{"name": 1}'])[0] == 0.0  # already imported: nothing new runs
    finally:
        sys.modules.pop(module, None)


# (spec text, fragment after "<file>:") for the YAML mistakes a user makes
BAD_YAML = [
    (
        "rewards:\n  - name: think_format\n   weight: 2\n",
        ":3:4: not valid YAML: expected <block end>, but found '<block mapping start>'",
    ),
    ("rewards: [think_format\n", ":2:1: not valid YAML: expected ',' or ']'"),
    ("rewards:\n\t- think_format\n", ":2:1: not valid YAML: found character '\\t'"),
    ("[" * 3000 + "]" * 3000, ":1:65: not valid YAML: nested more than 64 levels deep"),
    ("rewards:\n  - {name: length_penalty, weight: " + "9" * 5000 + "}\n", ":2:36: not valid YAML: an integer of 5000"),
]


@pytest.mark.parametrize("reader", sorted(readers()))
@pytest.mark.parametrize(("text", "fragment"), BAD_YAML, ids=["indent", "unclosed", "tab", "deep", "digits"])
def test_yaml_mistake_is_one_line_with_file_line_and_column(tmp_path, reader, text, fragment):
    spec = tmp_path / "rewards.yaml"
    spec.write_text(text)
    with pytest.raises(ConfigError) as caught:
        readers()[reader](spec)
    message = str(caught.value)
    assert message.startswith(f"{spec}{fragment}") and "\n" not in message and "<unicode string>" not in message


def test_cli_audit_reward_prints_the_yaml_mistake_in_one_line(tmp_path):
    spec = tmp_path / "rewards.yaml"
    spec.write_text("rewards:\n  - name: think_format\n   weight: 2\n")
    data = tmp_path / "rows.jsonl"
    data.write_text('{"prompt": "p", "solution": "1"}\n')
    command = ["audit", "reward", "--spec", str(spec), "--data", str(data), "--out", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-m", "rewardsmith", *command, "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert done.returncode != 0
    assert done.stderr.strip() == (
        f"rewardsmith: error: {spec}:3:4: not valid YAML: expected <block end>, but found '<block mapping start>' "
        "(while parsing a block collection)"
    ), done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ('{"prompt": ' + "[" * 5000 + "]" * 5000 + ', "solution": "1"}', "line 2: nested too deeply to read"),
        ('{"prompt": "p", "solution": ' + "7" * 5000 + "}", "line 2: a number too long to read"),
    ],
    ids=["deep", "digits"],
)
def test_hostile_data_row_is_one_error_naming_file_and_line(tmp_path, row, fragment):
    from rewardsmith.data import read_records

    path = tmp_path / "rows.jsonl"
    path.write_text('{"prompt": "p", "solution": "1"}\n' + row + "\n")
    with pytest.raises(ValueError) as caught:
        read_records(path)
    assert str(caught.value) == f"{path}: {fragment}" or str(caught.value).startswith(f"{path}: {fragment}")
