"""Real pytest as the reference for the KodCode translation: many (test module, solution) cases in one pytest run.

Each case is a folder with ``solution.py`` and ``test_<case>.py``. A ``conftest.py`` loads the case's own
``solution.py`` as the module ``solution`` just before pytest imports the case's test module (the test sees exactly
its solution, as when run alone) and records every test's outcome; ``--continue-on-collection-errors`` keeps one
case's broken import from stopping the others. A case's score is what ``code_tests`` reports: passed tests over the
tests that ran (skipped tests not counted; a module that fails to import scores 0).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

CONFTEST = textwrap.dedent(
    """
    import importlib.util
    import json
    import sys

    import pytest

    RESULTS = {}


    @pytest.hookimpl(tryfirst=True)
    def pytest_collectstart(collector):
        if isinstance(collector, pytest.Module):
            sys.modules.pop("solution", None)
            spec = importlib.util.spec_from_file_location("solution", collector.path.parent / "solution.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules["solution"] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                sys.modules.pop("solution", None)


    def pytest_collectreport(report):
        if report.failed and report.fspath:
            RESULTS.setdefault(report.fspath.split("/")[0], {})["<collection>"] = "failed"


    def pytest_runtest_logreport(report):
        tests = RESULTS.setdefault(report.nodeid.split("/")[0], {})
        if report.failed:
            tests[report.nodeid] = "failed"
        elif report.skipped and report.when != "teardown":
            tests.setdefault(report.nodeid, "skipped")
        elif report.when == "call" and report.passed:
            tests.setdefault(report.nodeid, "passed")


    def pytest_sessionfinish(session):
        (session.config.rootpath / "results.json").write_text(json.dumps(RESULTS))
    """
)


def pytest_scores(cases: dict[str, tuple[str, str]], root: Path, timeout: float = 300) -> dict[str, float | None]:
    """``{case: (test module, solution)}`` -> ``{case: passed / ran}`` (``None`` when no test ran)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "conftest.py").write_text(CONFTEST)
    for case, (test, solution) in cases.items():
        folder = root / case
        folder.mkdir()
        (folder / "solution.py").write_text(solution)
        (folder / f"test_{case}.py").write_text(test)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors"]
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")  # plain pytest, as KodCode's harness runs it
    run = [*command, "--rootdir", str(root), str(root)]
    subprocess.run(run, cwd=root, capture_output=True, timeout=timeout, env=env)
    results = json.loads((root / "results.json").read_text())
    scores: dict[str, float | None] = {}
    for case in cases:
        tests = results.get(case, {})
        if tests.get("<collection>") == "failed":
            scores[case] = 0.0
            continue
        ran = [outcome for outcome in tests.values() if outcome != "skipped"]
        scores[case] = ran.count("passed") / len(ran) if ran else None
    return scores
