"""Warm scripts of the local forkserver: a trusted ``python3 -S -c`` program named at start runs forked warm, and
what it can observe is what a fresh site-less interpreter would show it; nothing carries over between its runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rewardsmith.sandboxes.base import RunRequest, RunStatus
from rewardsmith.sandboxes.local.backend import LocalSandbox

#: prints what a program can see of the interpreter it was started in (``sys.flags.no_site`` aside)
PROBE = """
import builtins, importlib, json, sys
seen = {
    "path": sys.path,
    "meta_path": [getattr(f, "__module__", "") for f in sys.meta_path],
    "site_builtins": sorted(n for n in ("exit", "quit", "help", "license", "credits") if hasattr(builtins, n)),
    "main": [__name__, __loader__.__name__, __spec__, __package__, sorted(globals())],
    "argv": sys.argv,
    "hash": hash("abc"),
    "stdin": sys.stdin.read(),
    "imports": {},
}
for name in ("rk_warm", "pydantic", "_distutils_hack", "json", "fractions"):
    try:
        importlib.import_module(name)
        seen["imports"][name] = True
    except ImportError:
        seen["imports"][name] = False
print(json.dumps(seen))
raise SystemExit(3)
"""
#: leaves traces a later run would find if it did not start from a pristine process and a fresh filesystem
LITTER = """
import json, os, sys
print(json.dumps([getattr(json, "planted", None), os.environ.get("PLANTED"), os.listdir("/tmp"), sys.flags.no_site]))
json.planted = True
os.environ["PLANTED"] = "1"
open("/tmp/planted", "w").write("x")
"""


@pytest.fixture(scope="module")
def boxes():
    warm = LocalSandbox(tier="bwrap", warm_scripts=[PROBE, LITTER], warm_modules={"rk_warm": "X = 1"}, concurrency=1)
    if warm.tier != "bwrap":
        pytest.skip("the forkserver tier is unavailable here")
    cold = LocalSandbox(tier="bwrap", concurrency=1)
    yield warm, cold
    warm.close()
    cold.close()


def script(source: str, *flags: str, stdin: str = "") -> RunRequest:
    return RunRequest(argv=["python3", *flags, "-c", source, "arg"], stdin=stdin)


def test_a_warm_script_sees_what_a_fresh_site_less_interpreter_sees(boxes):
    warm, cold = boxes
    results = [box.run(script(PROBE, "-s", "-S", stdin="input")) for box in (warm, cold)]
    for result in results:
        assert result.status is RunStatus.RUNTIME_ERROR and result.exit_code == 3, result.stderr
    seen_warm, seen_cold = (json.loads(r.stdout) for r in results)
    assert seen_warm == seen_cold
    assert seen_cold["imports"] == {
        "rk_warm": False,
        "pydantic": False,
        "_distutils_hack": False,
        "json": True,
        "fractions": True,
    }


def test_warm_script_runs_share_nothing(boxes):
    warm, _ = boxes
    first, second = (warm.run(script(LITTER, "-S")) for _ in range(2))
    assert first.ok and second.ok, (first.stderr, second.stderr)
    assert json.loads(first.stdout) == json.loads(second.stdout) == [None, None, [], 0]  # no_site 0: it ran warm


def test_only_the_exact_script_with_site_less_flags_runs_warm(boxes):
    warm, _ = boxes
    cold_runs = [
        script(LITTER),  # site enabled: not what was compiled for
        script(LITTER, "-S", "-I"),
        script(LITTER + "\n", "-S"),  # another program
        RunRequest(argv=["python3", "-S", "-c"]),
    ]
    for request in cold_runs[:3]:
        result = warm.run(request)
        assert result.ok, result.stderr
        assert json.loads(result.stdout)[3] == int("-S" in request.argv)  # sys.flags.no_site of a started one
    assert not warm.run(cold_runs[3]).ok  # python3's own complaint: -c needs an argument


def test_an_untrusted_inline_run_before_cannot_reach_a_warm_script(boxes):
    warm, _ = boxes
    planted = warm.run(RunRequest(argv=["python3", "main.py"], files={"main.py": LITTER}))
    assert planted.ok, planted.stderr
    after = warm.run(script(LITTER, "-S"))
    assert json.loads(after.stdout) == [None, None, [], 0]


def test_warm_runs_hash_strings_with_the_fixed_seed_a_started_interpreter_gets(boxes):
    warm, _ = boxes
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    fresh = subprocess.run([sys.executable, "-c", "print(hash('abc'))"], capture_output=True, env=env, check=True)
    inline = warm.run(RunRequest(argv=["python3", "main.py"], files={"main.py": "print(hash('abc'))"}))
    assert inline.stdout == fresh.stdout
