"""The Ray tests, run inside a private network namespace with a real two-node cluster.

The cluster is ``tests/support/ray_cluster.py``'s.
"""

from __future__ import annotations

import re

import pytest

from tests.support.ray_cluster import IN_RAY_NETNS, can_unshare_net, ray_missing, run_in_private_network

RAY_MODULES = ["tests/scale/test_ray_pool.py", "tests/scale/test_ray_serve.py"]


@pytest.mark.slow
@pytest.mark.skipif(IN_RAY_NETNS, reason="already inside the private network namespace")
def test_ray_modules_pass_on_a_two_node_cluster_in_a_private_network() -> None:
    if ray_missing():
        pytest.skip(str(ray_missing()))
    if not can_unshare_net():
        pytest.skip("unshare --net --pid is not permitted here (needs root); the Ray cluster tests cannot run")
    result = run_in_private_network(RAY_MODULES)
    output = result.stdout + result.stderr
    assert result.returncode == 0, _without_ray_noise(output)[-8000:]
    passed = re.search(r"(\d+) passed", output)
    assert passed and int(passed.group(1)) > 0, output[-3000:]
    print(output.strip().splitlines()[-1])


def _without_ray_noise(output: str) -> str:
    """The pytest report without the raylet log dumps Ray prints to the driver when a node dies."""
    noisy = ("(raylet)", "[state-dump]", "(gcs_server)", "Ray deduplicates logs")
    return "\n".join(line for line in output.splitlines() if not any(n in line for n in noisy))
