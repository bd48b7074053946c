"""``math_equivalence``: extract the final answer, normalise it, and prove it equal to the gold.

Cut by stage: :mod:`.extract` (find both answers), :mod:`.normalize` (text clean-up), :mod:`.values`
(answers as exact values), :mod:`.compare` (structural equality), :mod:`.grade` (the in-process verdict),
:mod:`.symbolic` (math-verify + sympy in a worker), :mod:`.reward` (the registered reward).
"""

from rewardsmith.rewards.math.reward import MathEquivalence, MathEquivalenceConfig

__all__ = ["MathEquivalence", "MathEquivalenceConfig"]
