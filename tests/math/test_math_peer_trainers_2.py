r"""More trainers' own math-reward test cases, run through ``math_equivalence`` as they are (the rows mean what
they mean in ``test_math_peer_trainers.py``: gold, completion, the peer's verdict, rewardsmith's, why they differ).

Sources (the peers' test files at the commit read; all Apache-2.0):

- SkyRL ``skyrl-gym/tests/test_gsm8k.py`` (NovaSky-AI/SkyRL a956457): the gsm8k environment's rule reward.
- slime ``tests/test_rm_math.py`` and ``tests/test_rm_math_dapo.py`` (THUDM/slime 624b824): ``grade_answer_mathd``,
  ``grade_answer_sympy``, ``grade_answer_verl``, ``is_correct_strict_box``, ``is_correct_minerva``. A verdict of
  ``True``/``1`` is 1.0 here, ``False``/``-1`` is 0.0.
- rLLM ``tests/rewards/test_math_reward.py`` (rllm-org/rllm 9beb6e0): ``RewardMathFn`` with its default config
  (correct 1.0; a format error, a wrong answer and a missing gold all 0.0). Its multi-gold case (a list of golds)
  has no counterpart: ``math_equivalence`` takes one gold per row.
"""

from __future__ import annotations

import pytest

from rewardsmith.rewards.math.reward import MathEquivalence
from tests.support.verdict_ids import case_id as _id

B = r"\boxed"
_FORMAT = "a format rule of the peer's own; rewardsmith reads the answer (format is think_format's job)"

SKYRL = [
    ("42", "The answer is #### 42", 1.0, 1.0, ""),
    ("43", "The answer is #### 42", 0.0, 0.0, ""),
    ("42", "The answer is 42", 0.0, 1.0, "SkyRL's gsm8k env requires '#### 42'; " + _FORMAT),
]

SLIME = [
    ("0.5", rf"{B}{{\frac{{1}}{{2}}}}", 1.0, 1.0, ""),
    (r"\frac{1}{2}", rf"{B}{{\frac12}}", 1.0, 1.0, ""),
    ("45", rf"{B}{{45^\circ}}", 1.0, 1.0, ""),
    (r"\frac{3}{4}", rf"{B}{{3/4}}", 1.0, 1.0, ""),
    ("43", rf"{B}{{42}}", 0.0, 0.0, ""),
    ("1+x", rf"{B}{{x+1}}", 1.0, 1.0, ""),
    (
        r"\frac{1}{2}",
        rf"{B}{{\frac{{2}}{{4}}}}",
        0.0,
        1.0,
        "2/4 is 1/2; slime's sympy path refuses unreduced fractions",
    ),
    (rf"{B}{{42}}", rf"answer: {B}{{42}}", 1.0, 1.0, ""),
    ("42", "just 42", 0.0, 0.0, ""),
    ("", rf"{B}{{42}}", 0.0, None, "an empty gold is unscorable (no reference), not a wrong answer"),
    ("42", rf"{B}{{first}}, then {B}{{42}}", 1.0, 1.0, ""),
    ("42", r"long preamble … \boxed{42}", 1.0, 1.0, ""),
    ("42", rf"{B}{{43}}", 0.0, 0.0, ""),
    ("42", "plain 42", 0.0, 0.0, ""),
    ("42", "Long solution. Answer: 42", 1.0, 1.0, ""),
    ("42", "Answer: 41 was a wrong guess.\nAnswer: 42", 1.0, 1.0, ""),
    ("42", "just a number 42", 0.0, 0.0, ""),
]

_RLLM_THINK = "<think>2 + 2 = 4</think>\n"
RLLM = [
    ("4", _RLLM_THINK + rf"The answer is {B}{{4}}.", 1.0, 1.0, ""),
    ("0.5", "<think>a fraction or a decimal</think>\n" + rf"The answer is {B}{{0.5}}.", 1.0, 1.0, ""),
    ("4", "<think>2 + 2 = 5</think>\n" + rf"The answer is {B}{{5}}.", 0.0, 0.0, ""),
    ("4", "The answer is 4.", 0.0, 1.0, "rLLM requires a </think> delimiter; " + _FORMAT),
    ("4", _RLLM_THINK + "The answer is 4.", 0.0, 1.0, "rLLM requires a box; rewardsmith reads the answer phrase"),
    (None, _RLLM_THINK + rf"The answer is {B}{{4}}.", 0.0, None, "no gold: unscorable, not wrong"),
    ("x = 2, x = -3", "<think>solve it</think>\n" + rf"The answer is {B}{{x = 2, x = -3}}.", 1.0, 1.0, ""),
    (rf"{B}{{24}}", "<think>carefully</think>\n" + rf"The answer is {B}{{24}}.", 1.0, 1.0, ""),
    ("3.14159", "<think>about pi</think>\n" + rf"The answer is {B}{{3.14159}}.", 1.0, 1.0, ""),
    ("1/2", "<think>simplify</think>\n" + rf"The answer is {B}{{\frac{{1}}{{2}}}}.", 1.0, 1.0, ""),
    ("10", "<think>5 + 5 = 10</think>\n" + rf"The answer is {B}{{10}}.", 1.0, 1.0, ""),
    ("10", "<think>5 + 5 = 11</think>\n" + rf"The answer is {B}{{11}}.", 0.0, 0.0, ""),
]

TABLE = SKYRL + SLIME + RLLM


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=2, timeout_s=10)
    yield reward
    reward.close()


@pytest.mark.parametrize("case", TABLE, ids=[_id(c) for c in TABLE])
def test_peer_case(reward, case):
    gold, completion, peer, expected, why = case
    (result,) = reward.details([completion], solution=[gold])
    assert result.score == expected, result.reason
    assert (peer == expected) == (why == ""), "a difference from the peer needs its reason, agreement none"
