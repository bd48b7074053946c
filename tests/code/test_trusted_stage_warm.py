"""The trusted stage on the local backend runs forked warm (its program compiled once in the forkserver) and decides
exactly what a freshly started trusted interpreter decides."""

from __future__ import annotations

import pytest

from rewardsmith import get_reward
from rewardsmith.rewards.code import harness
from rewardsmith.sandboxes.local.backend import LocalSandbox

TEST = (
    "def check(candidate):\n"
    "    assert candidate(2, 3) == 5\n"
    "    assert all(candidate(i, 1) == i + 1 for i in range(4))\n"
    "    assert {candidate(1, 1), candidate(0, 2)} == {2}\n"
)
ROWS = [{"tests": {"test": TEST, "entry_point": "add"}}] * 4
COMPLETIONS = [
    "```python\ndef add(a, b):\n    return a + b\n```",
    "```python\ndef add(a, b):\n    return a - b\n```",
    "```python\ndef add(a, b):\n    return a + b if a < 3 else 0\n```",
    "```python\nimport sys\ndef add(a, b):\n    sys.modules['json'].dumps = lambda *x: 'forged'\n    return 0\n```",
]


@pytest.fixture(scope="module")
def rewards():
    if LocalSandbox().tier != "bwrap":
        pytest.skip("the forkserver tier is unavailable here")
    warm = get_reward("code_tests", backend="local")
    cold = get_reward("code_tests", backend="local", backend_options={"warm_scripts": []})
    yield warm, cold
    warm.close()
    cold.close()


def test_the_trusted_program_is_offered_as_a_warm_script(rewards):
    warm, cold = rewards
    assert warm._sandbox().warm_scripts == [harness.trusted_script()]
    assert cold._sandbox().warm_scripts == []


def test_warm_and_started_trusted_stages_agree(rewards):
    warm, cold = rewards
    verdicts = [[(r.score, r.reason) for r in reward.score_batch(COMPLETIONS, ROWS)] for reward in (warm, cold)]
    assert verdicts[0] == verdicts[1]
    assert [score for score, _ in verdicts[0]] == [1.0, 0.0, 0.0, 0.0]
