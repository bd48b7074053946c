"""Hostile-program containment tests, run inside their own PID namespace (see ``tests/support/pidns.py``)."""

from __future__ import annotations

import re

import pytest

from tests.support.pidns import IN_OWN_PID_NAMESPACE, can_unshare_pid, run_module_in_pid_namespace

HOST_HARMING_MODULES = ["tests/sandboxes/test_sandbox_security.py", "tests/sandboxes/test_sandbox_cross_run.py"]


@pytest.mark.slow
@pytest.mark.skipif(IN_OWN_PID_NAMESPACE, reason="already inside the PID namespace")
@pytest.mark.parametrize("module", HOST_HARMING_MODULES)
def test_module_passes_inside_its_own_pid_namespace(module: str) -> None:
    if not can_unshare_pid():
        pytest.skip("unshare --pid is unavailable here; the module runs in the session's namespace instead")
    result = run_module_in_pid_namespace(module)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    passed = re.search(r"(\d+) passed", output)
    assert passed and int(passed.group(1)) > 0, output[-3000:]
    print(output.strip().splitlines()[-1])
