r"""Trainers' own math-reward test cases, run through ``math_equivalence`` as they are.

Each row is ``(gold, completion, the peer's verdict, rewardsmith's verdict, why they differ)``; ``why`` is empty
where they agree. Sources (the peers' test files at the commit read; all Apache-2.0):

- TRL ``tests/test_rewards.py`` (huggingface/trl f2cd577): ``accuracy_reward``, ``reasoning_accuracy_reward``
  and the cosine-scaled reward's correctness cases.
- open-r1 ``tests/test_rewards.py`` (huggingface/open-r1 1416fa0): ``accuracy_reward`` and ``len_reward``.
- ms-swift ``tests/utils/test_rewards.py`` (modelscope/ms-swift 3602360): ``MathAccuracy``, whose completions
  answer in ``<answer>…</answer>``.
- AReaL ``tests/test_math_verify_reward.py`` (inclusionAI/AReaL 4aef98d): ``gsm8k_reward_fn``,
  ``geometry3k_reward_fn`` and ``MathVerifyWorker.verify``. Where AReaL asserts only that a float comes back,
  the peer's verdict is ``None`` and rewardsmith's verdict is pinned with its reason.

verl (``tests/utils/reward_score/``) holds only sandbox tests and no math-reward cases at the commit read.
"""

from __future__ import annotations

import pytest

from rewardsmith.rewards.math.reward import MathEquivalence
from tests.support.verdict_ids import case_id as _id

B = r"\boxed"
NO_VERDICT = None  # the peer's test asserts no verdict (only the type of the result)

TRL = [
    (r"\frac{63}{400}", rf"{B}{{\frac{{63}}{{400}}}}", 1.0, 1.0, ""),
    ("63/400", rf"{B}{{\frac{{63}}{{400}}}}", 1.0, 1.0, ""),
    (r"\frac{63}{400}", rf"{B}{{\frac{{64}}{{400}}}}", 0.0, 0.0, ""),
    ("6", rf"{B}{{3}}", 0.0, 0.0, ""),
    ("Answer is forty two.", "Answer is forty two.", None, 1.0, "number words: both sides state 42"),
    ("Answer is forty three.", rf"Some other content. {B}{{43}}.", None, 1.0, "number words: the gold states 43"),
    (r"\frac{1}{3}", rf"{B}{{\frac{{1}}{{3}}}}", 1.0, 1.0, ""),
    (r"\frac{63}{400}", rf"<think> Reasoning content </think> {B}{{\frac{{63}}{{400}}}}", 1.0, 1.0, ""),
    (r"\frac{63}{400}", rf"Reasoning content </think> {B}{{\frac{{63}}{{400}}}}", 1.0, 1.0, ""),
    (r"\frac{63}{400}", rf"<think> Reasoning content </think> {B}{{\frac{{64}}{{400}}}}", 0.0, 0.0, ""),
    (rf"{B}{{42}}", rf"<think> My answer is {B}{{42}} </think> Some other text.", 0.0, 0.0, ""),
    (rf"{B}{{42}}", rf"<think> The answer is {B}{{42}} </think> Here's a wrong answer: {B}{{43}}.", 0.0, 0.0, ""),
    (r"\frac{63}{400}", "<think> Incomplete reasoning without closing tag", 0.0, 0.0, ""),
    (r"\frac{63}{400}", r"Correct answer \frac{63}{400} but completely missing reasoning content", 0.0, 0.0, ""),
    ("forty two", rf"<think> Reasoning content </think> {B}{{42}}", None, 1.0, "number words: the gold is 42"),
    (r"\frac{1}{3}", rf"{B}{{\frac{{1}}{{2}}}}", 0.0, 0.0, ""),
]

OPEN_R1 = [
    (r"\frac{63}{400}", rf"{B}{{\frac{{63}}{{400}}}}", 1.0, 1.0, ""),
    (r"\frac{63}{400}", rf"{B}{{\frac{{64}}{{400}}}}", 0.0, 0.0, ""),
    ("6", rf"{B}{{3}}", 0.0, 0.0, ""),
    (r"\frac{63}{400}", rf"{B}{{\frac{{63}}{{400}}}}  " + "x" * 10, 1.0, 1.0, ""),
    (
        "unparseable_latex",
        rf"{B}{{answer}}",
        1.0,
        0.0,
        "len_reward counts an unparseable gold as correct; rewardsmith reads both as words, and they differ",
    ),
]

_SWIFT_WORKED = (
    "We are given a geometric sequence $\\{a_n\\}$ with:\n\n- $a_3 = 2$\n- $a_5 = 6$\n\nWe are to find $a_9$.\n\n"
    "---\n\n### Step 1: Recall the formula\n\n$$a_n = a_1 \\cdot r^{n-1}$$\n\n---\n\n### Step 2: Use the given "
    "terms\n\n$$a_3 = a_1 \\cdot r^2 = 2$$\n$$a_5 = a_1 \\cdot r^4 = 6$$\n\nDivide equation (2) by equation (1):\n"
    "$$r^2 = 3$$\n\n---\n\n### Step 3: Find $a_9$\n\n$$a_9 = a_1 \\cdot r^8 = \\frac{2}{3} \\cdot 81 = 54$$\n\n"
    "### ✅ Final Answer:\n\n<answer>54</answer>"
)
MS_SWIFT = [
    (rf"{B}{{42}}", rf"The answer is {B}{{42}}", 1.0, 1.0, ""),
    (rf"{B}{{100}}", rf"After careful calculation, the final answer is {B}{{100}}", 1.0, 1.0, ""),
    (
        rf"{B}{{8}}",
        "Let me solve step by step:\n1. First we have x = 2\n2. Then y = 3x = 6\n3. Finally z = x + y = 8\n"
        f"\nFinal answer: {B}{{8}}",
        1.0,
        1.0,
        "",
    ),
    (rf"{B}{{100}}", rf"The answer is {B}{{42}}", 0.0, 0.0, ""),
    (rf"{B}{{42}}", rf"{B}{{42}}", 1.0, 1.0, ""),
    (rf"{B}{{100}}", rf"{B}{{100}}", 1.0, 1.0, ""),
    (rf"{B}{{8}}", rf"{B}{{8}}", 1.0, 1.0, ""),
    (rf"{B}{{84}}", "<answer>84</answer>", 1.0, 1.0, ""),
    (rf"{B}{{100}}", rf"<answer>{B}{{100}}</answer>", 1.0, 1.0, ""),
    (
        rf"{B}{{54}}",
        "Let me solve:\nStep 1: Calculate x = 10\nStep 2: Calculate y = 20\nStep 3: Sum = 30\n\n<answer>54</answer>",
        1.0,
        1.0,
        "",
    ),
    (rf"{B}{{\frac{{1}}{{2}}}}", r"<answer>\frac{1}{2}</answer>", 1.0, 1.0, ""),
    (rf"<answer>{B}{{84}}</answer>", "<answer>84</answer>", 1.0, 1.0, ""),
    (rf"{B}{{100}}", "<answer>42</answer>", 0.0, 0.0, ""),
    (rf"{B}{{100}}", "<answer>100</answer>", 1.0, 1.0, ""),
    (rf"{B}{{8}}", rf"The answer is {B}{{8}}", 1.0, 1.0, ""),
    ("", "<answer>42</answer>", 0.0, None, "an empty gold is unscorable (no reference), not a wrong answer"),
    (rf"{B}{{42}}", rf"{B}{{42", 0.0, 0.0, ""),
    (rf"{B}{{84}}", "<answer>  84  </answer>", 1.0, 1.0, ""),
    (
        rf"{B}{{42}}",
        "<answer>42</answer> Some text <answer>100</answer>",
        1.0,
        0.0,
        "ms-swift reads the first tag; the last one is the final answer in rewardsmith, as the last box is",
    ),
    (rf"{B}{{54}}", _SWIFT_WORKED, 1.0, 1.0, ""),
    (rf"{B}{{\frac{{1}}{{2}}}}", "<answer>0.5</answer>", 1.0, 1.0, ""),
    (rf"{B}{{\sqrt{{4}}}}", "<answer>2</answer>", 1.0, 1.0, ""),
    ("\n\n\\[\n\\boxed{84}\n\\]", "<answer>84</answer>", 1.0, 1.0, ""),
    ("Therefore, the value of \\(a^2 - a + 2\\) is \\(\\boxed{3}\\).", "<answer>3</answer>", 1.0, 1.0, ""),
    ("\\[\\boxed{100}\\]", "<answer>100</answer>", 1.0, 1.0, ""),
    ("\\[\\boxed{x = 42}\\]", "<answer>\\(x = 42\\)</answer>", 1.0, 1.0, ""),
]

_FLOAT_ONLY = "AReaL asserts only that a float comes back"
AREAL = [
    ("4", "The answer is 4", 1.0, 1.0, ""),
    ("1/2", "The answer is 0.5", 1.0, 1.0, ""),
    ("4", "Step 1: 2+2=4. \\boxed{4}", 1.0, 1.0, ""),
    ("4", "The answer is 5", 0.0, 0.0, ""),
    ("4", "", 0.0, 0.0, ""),
    ("2", "$\\sqrt{4} = 2$", 1.0, 1.0, ""),
    ("4", "The answer is !!!invalid!!!", 0.0, 0.0, ""),
    ("2^3", "The answer is 8", 1.0, 1.0, ""),
    ("4", r"The answer is $\sqrt{16}$", 1.0, 1.0, ""),
    ("5/6", r"The answer is $\frac{5}{6}$", 1.0, 1.0, ""),
    ("-15", "-15", 1.0, 1.0, ""),
    ("1/3", "0.333333333", NO_VERDICT, 1.0, f"{_FLOAT_ONLY}; a decimal for 1/3 is within rel_tol"),
    ("3", "x = 3", 1.0, 1.0, ""),
    ("42", "Step 1: Calculate\nStep 2: Simplify\nFinal answer: 42", 1.0, 1.0, ""),
    ("2*pi", r"$2\pi$", NO_VERDICT, 1.0, f"{_FLOAT_ONLY}; 2*pi is 2\\pi"),
    ("1000", r"$10^3$", 1.0, 1.0, ""),
    ("42", "42", 1.0, 1.0, ""),
    ("999999999999999", "999999999999999", 1.0, 1.0, ""),
    ("0.0000001", "0.0000001", 1.0, 1.0, ""),
    (
        r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
        r"$\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}$",
        NO_VERDICT,
        1.0,
        f"{_FLOAT_ONLY}; the same matrix",
    ),
    ("12/3", "4", 1.0, 1.0, ""),
    ("3/12", "4", 0.0, 0.0, ""),
    ("5", "3+2", 1.0, 1.0, ""),
    ("2*x + 2", "2x + 2", NO_VERDICT, 1.0, f"{_FLOAT_ONLY}; the same polynomial"),
    ("4", "x = 4", 1.0, 1.0, ""),
    ("-1", r"$e^{i\pi} = -1$", 1.0, 1.0, ""),
    ("1000", r"$10^3 = 1000$", 1.0, 1.0, ""),
    ("1000", r"$1 \times 10^3$", 1.0, 1.0, ""),
    ("3", r"$\begin{vmatrix} 2 & 1 \\ 1 & 2 \end{vmatrix} = 3$", 1.0, 1.0, ""),
    ("2/3", r"$\frac{\frac{1}{2}}{\frac{3}{4}} = \frac{2}{3}$", 1.0, 1.0, ""),
    ("10", r"$\binom{5}{2} = 10$", 1.0, 1.0, ""),
    ("1", r"$\sin\left(\frac{\pi}{2}\right) = 1$", 1.0, 1.0, ""),
    ("1", r"$\lim_{x \to 0} \frac{\sin x}{x} = 1$", 1.0, 1.0, ""),
    ("3", r"The result is $3$", 1.0, 1.0, ""),
    ("2", r"$\left| 3 - 5 \right| = 2$", 1.0, 1.0, ""),
    ("2", "$17 \\bmod 5 = 2$", 1.0, 1.0, ""),
    ("3", r"$\log_2(8) = 3$", 1.0, 1.0, ""),
    # MathVerifyWorker.verify(response, ground_truth)
    ("None", r"\boxed{0.0667}", 0.0, 0.0, ""),
    (
        r"\boxed{0.066666793}",
        r"\boxed{0.0666668}",
        1.0,
        0.0,
        "two decimals that differ are different numbers; AReaL's 1.0 is math-verify's rounding to 6 places",
    ),
    (r"\boxed{0.066793}", r"\boxed{0.067}", 0.0, 0.0, ""),
    (r"\boxed{2.23}", r"\boxed{2.232}", 0.0, 0.0, ""),
    (r"\boxed{2.232}", r"\boxed{2.23}", 0.0, 0.0, ""),
    ("answer is 0.6666667", "The final answer is \\boxed{2/3}.", 1.0, 1.0, ""),
    (
        "the answer is sqrt(2)",
        "After simplification we get \\boxed{\\sqrt{2}}",
        0.0,
        1.0,
        "sqrt(2) is \\sqrt{2}; AReaL's own test calls its 0.0 'a BAD case'",
    ),
    ("answer is 10000", "Area equals \\boxed{10^4} square units", 1.0, 1.0, ""),
    ("answer is 0.25 + 3", "Result: \\boxed{(1/2)^{2} + \\sqrt{9}}", 1.0, 1.0, ""),
]

_BRACKETS = "Geometry3K's [answer] is that dataset's own format: read only by the opt-in last-number fallback"
AREAL_GEOMETRY3K = [  # (gold, completion, AReaL, rewardsmith by default, rewardsmith with the fallbacks, why)
    ("90", "The angle is [90].", 1.0, 0.0, 1.0, _BRACKETS),
    ("5", "The length is [5.0].", 1.0, 0.0, 1.0, _BRACKETS),
    ("90", "The angle is [60].", 0.0, 0.0, 0.0, ""),
    ("90", "The answer is 90 degrees.", 1.0, 1.0, 1.0, ""),
    ("0.5", "The ratio is [1/2].", 1.0, 0.0, 1.0, _BRACKETS),
    ("90", "", 0.0, 0.0, 0.0, ""),
    ("90", "The angle is [ 90 ].", 1.0, 0.0, 1.0, _BRACKETS),
    ("45", "[45 degrees]", 1.0, 0.0, 1.0, _BRACKETS),
    ("45", "[45]", 1.0, 0.0, 1.0, _BRACKETS),
    ("-3", "[-3]", 1.0, 0.0, 1.0, _BRACKETS),
    ("2", r"[$\sqrt{4}$]", 1.0, 0.0, 1.0, _BRACKETS),
    ("45", "First try [30], second try [45].", 1.0, 0.0, 1.0, _BRACKETS),
    ("10000", r"[$10^4$]", 1.0, 0.0, 1.0, _BRACKETS),
    ("2", r"[$\sqrt{\sqrt{16}}$]", 1.0, 0.0, 1.0, _BRACKETS),
    ("5", r"[$\sqrt{3^2 + 4^2}$] = [5]", 1.0, 0.0, 1.0, _BRACKETS),
]

TABLE = TRL + OPEN_R1 + MS_SWIFT + AREAL


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=2, timeout_s=10)
    yield reward
    reward.close()


@pytest.fixture(scope="module")
def with_fallbacks():
    reward = MathEquivalence(workers=1, timeout_s=10, fallback_last_math=True, fallback_last_number=True)
    yield reward
    reward.close()


@pytest.mark.parametrize("case", TABLE, ids=[_id(c) for c in TABLE])
def test_peer_case(reward, case):
    gold, completion, peer, expected, why = case
    (result,) = reward.details([completion], solution=[gold])
    assert result.score == expected, result.reason
    assert (peer == expected) == (why == ""), "a difference from the peer needs its reason, agreement none"


@pytest.mark.parametrize("case", AREAL_GEOMETRY3K, ids=[_id(c) for c in AREAL_GEOMETRY3K])
def test_geometry3k_brackets(reward, with_fallbacks, case):
    gold, completion, _, by_default, opted_in, _ = case
    (result,) = reward.details([completion], solution=[gold])
    assert result.score == by_default, result.reason
    (result,) = with_fallbacks.details([completion], solution=[gold])
    assert result.score == opted_in, result.reason


def test_trl_custom_reasoning_delimiter():
    completion = rf"<REASONING_START> Reasoning content </REASONING_END> {B}{{\frac{{63}}{{400}}}}"
    reward = MathEquivalence(symbolic=False, reasoning_end="</REASONING_END>")
    assert reward([completion], solution=[r"\frac{63}{400}"]) == [1.0]


def test_areal_result_phrase_with_the_fallbacks(with_fallbacks):
    assert with_fallbacks([r"The result is $3$"], solution=["3"]) == [1.0]
