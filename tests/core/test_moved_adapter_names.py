"""The adapter modules' names from before they were grouped by kind still import, as the same module objects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith.adapters.moved import MOVED, new_name

ROOT = Path(__file__).resolve().parents[2]

# Each probe runs in a fresh interpreter: an old name must work as the first import of a process, as in a verl worker.
PROBE = """
import importlib, json, sys, warnings
old, new = sys.argv[1], sys.argv[2]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    via_old = importlib.import_module(old)
via_new = importlib.import_module(new)
print(json.dumps({
    "same": via_old is via_new,
    "name": via_old.__name__,
    "warnings": [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)],
    "copies": sorted(k for k, v in sys.modules.items() if v is via_new),
}))
"""


def _probe(old: str, new: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, old, new], capture_output=True, text=True, timeout=120, check=True, cwd=ROOT
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("rewardsmith.adapters.verl", "rewardsmith.adapters.trainers.verl"),
        ("rewardsmith.adapters.trl", "rewardsmith.adapters.trainers.trl"),
        ("rewardsmith.adapters.serve.app", "rewardsmith.adapters.runtime.serve.app"),
        ("rewardsmith.adapters.ray.pool", "rewardsmith.adapters.runtime.ray.pool"),
        ("rewardsmith.adapters.verifiers.rubric", "rewardsmith.adapters.trainers.verifiers.rubric"),
    ],
)
def test_old_name_is_the_new_module_and_says_its_new_name(old: str, new: str) -> None:
    result = _probe(old, new)
    assert result["same"] and result["name"] == new
    assert any(new in message for message in result["warnings"])
    # one module object, reachable by both names, never executed twice from disk under the old one
    assert set(result["copies"]) == {old, new}


def test_new_names_import_without_a_warning() -> None:
    result = _probe("rewardsmith.adapters.trainers.verl", "rewardsmith.adapters.trainers.verl")
    assert result["same"] and result["warnings"] == []


def test_every_moved_name_points_at_a_module_of_the_tree_and_its_old_file_is_gone() -> None:
    for old, new in MOVED.items():
        relative = Path(*new.split(".")[1:])
        assert (ROOT / f"{relative}.py").is_file() or (ROOT / relative / "__init__.py").is_file(), new
        old_relative = Path(*old.split(".")[1:])
        assert not (ROOT / f"{old_relative}.py").exists() and not (ROOT / old_relative).exists(), old


def test_only_moved_names_and_their_submodules_are_mapped() -> None:
    assert new_name("rewardsmith.adapters.serve.scoring") == "rewardsmith.adapters.runtime.serve.scoring"
    assert new_name("rewardsmith.adapters.verl_calls") == "rewardsmith.adapters.trainers.verl_calls"
    assert new_name("rewardsmith.adapters.serves") is None  # a prefix of a word is not the moved name
    assert new_name("rewardsmith.adapters.mini.grpo") is None
    assert new_name("rewardsmith.adapters.trainers.verl") is None


def test_a_pickled_environment_from_an_old_name_loads_the_current_class() -> None:
    import pickle

    from rewardsmith.adapters.trainers import environments

    legacy = pickle.dumps(environments.PythonSandboxEnvironment, protocol=0).replace(  # names as text lines
        b"rewardsmith.adapters.trainers.environments", b"rewardsmith.adapters.environments"
    )
    assert b"rewardsmith.adapters.environments" in legacy
    assert pickle.loads(legacy) is environments.PythonSandboxEnvironment
