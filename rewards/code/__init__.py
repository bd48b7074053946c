"""``code_tests``: run a completion's program against the row's tests in a sandbox.

Cut by stage: :mod:`.extract` (the program in a completion), :mod:`.test_formats` (the tests as datasets
ship them), :mod:`.harness` (test plans, in-sandbox requests and the verdict decided outside the sandbox),
:mod:`.reward` (the registered reward).
"""

from rewardkit.rewards.code.reward import CodeTests, CodeTestsConfig

__all__ = ["CodeTests", "CodeTestsConfig"]
