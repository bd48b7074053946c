"""``code_tests``: run a completion's program against the row's tests in a sandbox.

Cut by stage: :mod:`.extract` (the program in a completion), :mod:`.case_formats` and :mod:`.datasets` (the tests
as datasets ship them), :mod:`.plans` (what of a test reaches the solution), :mod:`.requests` (every sandboxed run),
:mod:`.records` and :mod:`.values` (what runs report, decoded with bounded cost), :mod:`.stdout_match`,
:mod:`.checking` (the trusted stage and the rounds of program tests), :mod:`.harness` (why a pass cannot be forged),
:mod:`.reward` (the registered reward).
"""

from rewardsmith.rewards.code.reward import CodeTests, CodeTestsConfig

__all__ = ["CodeTests", "CodeTestsConfig"]
