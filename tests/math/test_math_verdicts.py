"""The verdict table of ``math_equivalence``: (gold, completion, expected score), one row per behaviour.

Most rows are decided by the in-process fast path; rows marked ``SYMBOLIC`` need math-verify/sympy and
go through the hard-timeout worker pool.
"""

from __future__ import annotations

import pytest

from rewardsmith import get_reward
from rewardsmith.rewards.math.reward import MathEquivalence
from tests.support.verdict_ids import case_id as _id

B = r"\boxed"

# (gold, completion, expected)
INTEGERS = [
    ("72", f"So she sold {B}{{72}} clips.", 1.0),
    ("72", f"{B}{{71}}", 0.0),
    ("-3", f"{B}{{-3}}", 1.0),
    ("-3", f"{B}{{3}}", 0.0),
    ("0", f"{B}{{0}}", 1.0),
    ("007", f"{B}{{7}}", 1.0),
    ("5", f"{B}{{+5}}", 1.0),
    ("5", r"$\boxed{5}$", 1.0),
    ("5", f"{B} 5", 1.0),
    ("5", r"\fbox{5}", 1.0),
    ("12345678901234567890123456789", f"{B}{{12345678901234567890123456789}}", 1.0),
    ("12345678901234567890123456789", f"{B}{{12345678901234567890123456788}}", 0.0),
    ("1" + "0" * 5000, f"{B}{{1{'0' * 5000}}}", 1.0),
    ("1" + "0" * 5000, f"{B}{{1{'0' * 4999}1}}", 0.0),
    ("10^{100}", f"{B}{{1{'0' * 100}}}", 1.0),
    ("10^{100}", f"{B}{{1{'0' * 99}1}}", 0.0),
    ("9007199254740993", f"{B}{{9007199254740992}}", 0.0),  # differs beyond float precision
    ("2^{3}", f"{B}{{8}}", 1.0),
    ("2^{3}", f"{B}{{2}}", 0.0),
    ("2^{10}", f"{B}{{1024}}", 1.0),
    ("10^{-1}", f"{B}{{0.1}}", 1.0),
    ("10^{-1}", f"{B}{{10}}", 0.0),
    ("10^{-1}", r"\boxed{\frac{1}{10}}", 1.0),
    # A whole-number gold is exact: a decimal answer must equal it, not merely come within rel_tol.
    ("2000000", f"{B}{{2000001.0}}", 0.0),
    ("123456789", f"{B}{{123456789.9}}", 0.0),
    ("1000000", f"{B}{{1000000.5}}", 0.0),
    ("2000000", f"{B}{{2000000.0}}", 1.0),
    ("2000000", f"{B}{{2.000000e6}}", 1.0),
]

SCIENTIFIC = [
    ("0", f"{B}{{1e-99999999}}", 0.0),  # not Euler's e - 99999999
    ("0", f"{B}{{1e-5}}", 0.0),
    ("0.00001", f"{B}{{1e-5}}", 1.0),
    ("2500", f"{B}{{2.5E+3}}", 1.0),
    ("2500", f"{B}{{2.5e3}}", 1.0),
    ("2500", f"{B}{{2.6e3}}", 0.0),
    ("10^{-500}", f"{B}{{1.0e-500}}", 1.0),  # exponents past 400 compare exactly, never as floats
    ("10^{-500}", f"{B}{{1e-501}}", 0.0),
    ("1e-99999999", r"\boxed{10^{-99999999}}", 1.0),
    ("1e-99999999", r"\boxed{1.5\times10^{-99999999}}", 0.0),
    ("1" + "0" * 5000, f"{B}{{1e5000}}", 1.0),
    ("1" + "0" * 5000, f"{B}{{1e5001}}", 0.0),
    (r"x+\frac{1}{100000}", f"{B}{{x+1e-5}}", 1.0),
]

FRACTIONS = [
    (r"\frac{1}{2}", f"{B}{{0.5}}", 1.0),
    (r"\frac{1}{2}", r"\boxed{\dfrac{1}{2}}", 1.0),
    (r"\frac{1}{2}", r"\boxed{\tfrac12}", 1.0),
    (r"\frac{1}{2}", r"\boxed{\dfrac12}", 1.0),
    (r"\frac{1}{2}", r"\boxed{\frac12}", 1.0),
    (r"\frac{1}{2}", r"\boxed{\frac1{2}}", 1.0),
    (r"\frac{1}{2}", r"\boxed{\frac{1}2}", 1.0),
    (r"\frac{1}{2}", f"{B}{{1/2}}", 1.0),
    (r"\frac{1}{2}", f"{B}{{2/4}}", 1.0),
    (r"\frac{1}{2}", r"\boxed{\frac{2}{4}}", 1.0),
    (r"\frac{1}{2}", f"{B}{{0.50}}", 1.0),
    (r"\frac{1}{2}", f"{B}{{0.51}}", 0.0),
    (r"\frac{1}{2}", r"\boxed{\frac{1}{3}}", 0.0),
    (r"-\frac{3}{4}", f"{B}{{-0.75}}", 1.0),
    (r"-\frac{3}{4}", r"\boxed{\frac{-3}{4}}", 1.0),
    (r"-\frac{3}{4}", r"\boxed{\frac{3}{4}}", 0.0),
    (r"\frac{1}{3}", f"{B}{{0.3333333}}", 1.0),
    (r"\frac{1}{3}", f"{B}{{0.33}}", 0.0),
    (r"\frac{1}{3}", f"{B}{{0.333}}", 0.0),
    (r"\frac{1}{2}", f"{B}{{0.5000001}}", 0.0),  # 1/2 has an exact decimal: no tolerance
    ("3.14", f"{B}{{3.1400001}}", 0.0),  # two decimals compare exactly
    (r"\frac{2}{3}", f"{B}{{0.6666667}}", 1.0),  # 2/3 has none: a 7-digit rounding is within rel_tol
    ("0.1", f"{B}{{\\frac{{1}}{{10}}}}", 1.0),
    ("3.14", f"{B}{{3.14}}", 1.0),
    ("3.14", f"{B}{{3.140}}", 1.0),
    ("3.14", f"{B}{{3.15}}", 0.0),
    ("0.5", f"{B}{{.5}}", 1.0),
    ("1.5", r"\boxed{\frac{3}{2}}", 1.0),
    ("2.5", r"\boxed{2\frac{1}{2}}", 1.0),  # mixed number
    (r"2\frac{1}{2}", r"\boxed{\frac{5}{2}}", 1.0),
    (r"3\frac{1}{4}", f"{B}{{3.25}}", 1.0),
    (r"3\frac{1}{4}", f"{B}{{3.5}}", 0.0),
    ("1500", r"\boxed{1.5\times10^{3}}", 1.0),
    ("1500", f"{B}{{1.5e3}}", 1.0),
    ("0.002", r"\boxed{2\cdot 10^{-3}}", 1.0),
    ("6.02\\times10^{23}", r"\boxed{6.02 \times 10^{23}}", 1.0),
    ("6.02\\times10^{23}", r"\boxed{6.03 \times 10^{23}}", 0.0),
]

PERCENT_UNITS = [
    ("25\\%", f"{B}{{25\\%}}", 1.0),
    ("25\\%", f"{B}{{25}}", 1.0),
    ("25\\%", f"{B}{{0.25}}", 1.0),
    ("0.25", f"{B}{{25\\%}}", 1.0),
    ("25", f"{B}{{25\\%}}", 1.0),
    ("25\\%", f"{B}{{30\\%}}", 0.0),
    ("25\\%", "The answer is 25%.", 1.0),
    ("1000", f"{B}{{1,000}}", 1.0),
    ("1000", f"{B}{{1{{,}}000}}", 1.0),
    ("1,000,000", f"{B}{{1000000}}", 1.0),
    ("1234567", "#### 1,234,567", 1.0),
    ("1000", f"{B}{{1,001}}", 0.0),
    ("18", r"\boxed{\$18}", 1.0),
    ("18", r"\boxed{\$18.00}", 1.0),
    ("18", "The answer is $18.", 1.0),
    ("\\$18", f"{B}{{18}}", 1.0),
    ("18", r"\boxed{\$19}", 0.0),
    ("5", r"\boxed{5\text{ cm}}", 1.0),
    ("5", r"\boxed{5 \text{cm}^2}", 1.0),
    ("5", r"\boxed{5 \mbox{ meters}}", 1.0),
    ("5", "The answer is 5 apples.", 1.0),
    ("5 cm", f"{B}{{5}}", 1.0),
    ("5\\text{ cm}", f"{B}{{6}}", 0.0),
    ("90", r"\boxed{90^\circ}", 1.0),
    ("90", r"\boxed{90^{\circ}}", 1.0),
    ("90^\\circ", f"{B}{{90}}", 1.0),
    ("90", f"{B}{{90°}}", 1.0),
    ("90", r"\boxed{90\degree}", 1.0),
    ("90", r"\boxed{45^\circ}", 0.0),
]

INTERVALS_SETS = [
    ("(0, 3]", r"\boxed{(0,3]}", 1.0),
    ("(0, 3]", r"\boxed{(0, 3)}", 0.0),
    ("(0, 3]", r"\boxed{[0, 3]}", 0.0),
    ("(0, 3]", r"\boxed{0 < x \le 3}", 1.0),
    ("(0, 3]", r"\boxed{0 < x \leq 3}", 1.0),
    ("(0, 3]", r"\boxed{0 < x < 3}", 0.0),
    ("(0, 3]", r"\boxed{(0, 4]}", 0.0),
    ("(0, 3]", r"\boxed{x \in (0, 3]}", 1.0),
    ("[2, \\infty)", r"\boxed{x \geq 2}", 1.0),
    ("[2, \\infty)", r"\boxed{x > 2}", 0.0),
    ("(-\\infty, 5)", r"\boxed{x < 5}", 1.0),
    ("(-\\infty, 5)", r"\boxed{(-\infty,5)}", 1.0),
    ("(-\\infty, 5)", r"\boxed{(-\infty,5]}", 0.0),
    ("(-\\infty, 0) \\cup (1, \\infty)", r"\boxed{(1,\infty)\cup(-\infty,0)}", 1.0),
    ("(-\\infty, 0) \\cup (1, \\infty)", r"\boxed{(-\infty,0)\cup[1,\infty)}", 0.0),
    ("[-1, 1]", r"\boxed{\left[-1, 1\right]}", 1.0),
    ("[-1, 1]", r"\boxed{-1 \le x \le 1}", 1.0),
    ("(1, 2)", r"\boxed{(1, 2)}", 1.0),
    ("(1, 2)", r"\boxed{(2, 1)}", 0.0),  # tuples keep their order
    ("(1, 2, 3)", r"\boxed{(1,2,3)}", 1.0),
    ("(1, 2, 3)", r"\boxed{(1,3,2)}", 0.0),
    ("(1, 2, 3)", r"\boxed{(1,2)}", 0.0),
    ("(\\frac{1}{2}, -3)", r"\boxed{(0.5, -3)}", 1.0),
    ("\\{1, 2, 3\\}", r"\boxed{\{3, 1, 2\}}", 1.0),  # sets do not
    ("\\{1, 2, 3\\}", r"\boxed{\{1, 2\}}", 0.0),
    ("\\{1, 2\\}", r"\boxed{\{1, 2, 3\}}", 0.0),
    ("\\{1, 2\\}", r"\boxed{\{1, 3\}}", 0.0),
    ("\\{1, 2\\}", r"\boxed{\lbrace 2, 1 \rbrace}", 1.0),
    ("\\{1, 2\\}", r"\boxed{(1, 2)}", 0.0),
    ("1, 2", r"\boxed{2, 1}", 1.0),  # "find all" lists are unordered
    ("1, 2", r"\boxed{1, 3}", 0.0),  # math-verify's cross product would accept this
    ("1, 2", r"\boxed{1}", 0.0),
    ("1, 2", r"\boxed{1, 2, 3}", 0.0),
    ("-2, 3", r"\boxed{3, -2}", 1.0),
    ("-2, 3", r"\boxed{x = 3, -2}", 1.0),
    ("1, 2", r"\boxed{\{1, 2\}}", 1.0),
    ("\\frac{1}{2}, 2", r"\boxed{2, 0.5}", 1.0),
    ("(1, 2), (3, 4)", r"\boxed{(3, 4), (1, 2)}", 1.0),
    ("(1, 2), (3, 4)", r"\boxed{(4, 3), (1, 2)}", 0.0),
]

MATRICES_COMPLEX_EQUATIONS = [
    (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"\boxed{\begin{pmatrix}1&2\\3&4\end{pmatrix}}", 1.0),
    (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"\boxed{\begin{bmatrix}1&2\\3&4\end{bmatrix}}", 1.0),
    (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"\boxed{\begin{pmatrix}1&3\\2&4\end{pmatrix}}", 0.0),
    (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"\boxed{\begin{pmatrix}1&2&3\\4&5&6\end{pmatrix}}", 0.0),
    (r"\begin{pmatrix} 1/2 \\ 0 \end{pmatrix}", r"\boxed{\begin{pmatrix}0.5\\0\end{pmatrix}}", 1.0),
    ("2+3i", f"{B}{{2+3i}}", 1.0),
    ("2+3i", f"{B}{{3i+2}}", 1.0),
    ("2+3i", f"{B}{{2-3i}}", 0.0),
    ("2+3i", f"{B}{{2}}", 0.0),
    ("2+3i", f"{B}{{5}}", 0.0),
    ("i", f"{B}{{i}}", 1.0),
    ("-i", f"{B}{{-i}}", 1.0),
    ("-i", f"{B}{{i}}", 0.0),
    ("1-i", f"{B}{{-i+1}}", 1.0),
    ("\\frac{1}{2}+\\frac{1}{2}i", f"{B}{{0.5+0.5i}}", 1.0),
    ("5", f"{B}{{x = 5}}", 1.0),
    ("5", f"{B}{{x=6}}", 0.0),
    ("x = 5", f"{B}{{5}}", 1.0),
    ("x = 5", f"{B}{{x=5}}", 1.0),
    ("x = 5", f"{B}{{y=5}}", 0.0),
    ("x = 5", f"{B}{{4}}", 0.0),
    ("y=2x+1", f"{B}{{y=2x+1}}", 1.0),
    ("y=2x+1", f"{B}{{y = 2x + 1}}", 1.0),
    ("k=\\frac{1}{2}", f"{B}{{k=0.5}}", 1.0),
]

REORDERED_AND_LISTS = [
    ("2x+1", f"{B}{{1+2x}}", 1.0),  # same terms in another order: no sympy needed
    (r"\sqrt{2}+1", r"\boxed{1+\sqrt{2}}", 1.0),
    ("a-b+c", f"{B}{{c+a-b}}", 1.0),
    ("a-b+c", f"{B}{{c-a+b}}", 0.0),
    (r"\pm 2", f"{B}{{2, -2}}", 1.0),
    (r"\pm 2", f"{B}{{-2, 2}}", 1.0),
    (r"\pm 2", f"{B}{{2}}", 0.0),
    (r"1 \pm \sqrt{2}", r"\boxed{1-\sqrt{2}, 1+\sqrt{2}}", 1.0),
    ("3, 5", r"\boxed{x = 5 \text{ or } x = 3}", 1.0),
    ("3, 5", "The answer is x = 3 or x = 5.", 1.0),
    ("3, 5", r"\boxed{x = 3 \text{ or } x = 4}", 0.0),
    ("yes", f"{B}{{Yes}}", 1.0),
    ("yes", f"{B}{{no}}", 0.0),
    (r"\text{Monday and Tuesday}", r"\boxed{\text{Tuesday, Monday}}", 1.0),
    (r"\frac{", f"{B}{{7}}", None),  # unreadable gold: unscorable, never a free 1.0
    (r"4\sqrt{7}", r"\boxed{\sqrt{112}}", 1.0),  # square roots in canonical form, no sympy
    (r"6\sqrt{6}", r"\boxed{\sqrt{36}}", 0.0),
    (r"\frac{\sqrt{3}}{2}", r"\boxed{\sqrt{3}/2}", 1.0),
    (r"-\sqrt{2}", r"\boxed{\sqrt{2}}", 0.0),
    (r"\sqrt{16}", r"\boxed{4}", 1.0),
    (r"\sqrt{2}", r"\boxed{\frac{3}{2}}", 0.0),
]

SYMBOLIC = [
    ("y=2x+1", f"{B}{{y=1+2x}}", 1.0),
    ("y=2x+1", f"{B}{{y=2x}}", 0.0),
    ("y=2x+1", f"{B}{{2x+1}}", 1.0),
    ("2x+1", f"{B}{{1+2x}}", 1.0),
    ("2x+1", f"{B}{{2x-1}}", 0.0),
    ("x^2-1", f"{B}{{(x-1)(x+1)}}", 1.0),
    ("x^2-1", f"{B}{{(x-1)^2}}", 0.0),
    (r"\frac{\sqrt{3}}{2}", r"\boxed{\frac{\sqrt3}{2}}", 1.0),
    (r"\frac{\sqrt{3}}{2}", r"\boxed{\frac{1}{2}\sqrt{3}}", 1.0),
    (r"\frac{\sqrt{3}}{2}", r"\boxed{\frac{\sqrt{2}}{2}}", 0.0),
    (r"2\sqrt{2}", r"\boxed{\sqrt{8}}", 1.0),
    (r"2\sqrt{2}", r"\boxed{\sqrt{6}}", 0.0),
    (r"\pi/2", r"\boxed{\frac{\pi}{2}}", 1.0),
    (r"\frac{\pi}{2}", r"\boxed{90}", 0.0),
    ("3\\pi", r"\boxed{3\pi}", 1.0),
    ("\\frac{3}{\\pi}", r"\boxed{3\pi}", 0.0),
    ("8", r"\boxed{2^3}", 1.0),
    ("8", r"\boxed{2 \cdot 4}", 1.0),
    ("8", r"\boxed{2 \cdot 5}", 0.0),
    (r"\sqrt{2}", r"\boxed{1.41421356}", 1.0),
    (r"\sqrt{2}", r"\boxed{1.5}", 0.0),
    (r"\frac{1+\sqrt{5}}{2}", r"\boxed{\frac{\sqrt{5}+1}{2}}", 1.0),
    ("e^{2}", r"\boxed{e^2}", 1.0),
    (r"\ln 2", r"\boxed{\ln(2)}", 1.0),
    ("(1, \\sqrt{2})", r"\boxed{(1, \sqrt{2})}", 1.0),
    ("(1, \\sqrt{2})", r"\boxed{(\sqrt{2}, 1)}", 0.0),
    ("\\{\\sqrt{2}, 1\\}", r"\boxed{\{1, \sqrt{2}\}}", 1.0),
    ("(0, \\pi)", r"\boxed{(0, \pi]}", 0.0),
    # math-verify says "not equal" to these; simplify(gold - answer) == 0 says equal.
    ("x", r"\boxed{(x+1)^{2}-(x+1)^{2}+x}", 1.0),
    ("x", r"\boxed{(x+1)^{2}-x^{2}-2x-1+x}", 1.0),
    ("x", r"\boxed{(x+1)^{2}-x^{2}-2x+x}", 0.0),
    ("0", r"\boxed{2^{3000000}-2^{3000000}}", 1.0),
    ("2", r"\boxed{2^{3000000}-2^{3000000}}", 0.0),  # 0, not 2
    ("2", r"\boxed{2^{3000000}-2^{3000000}+2}", 1.0),
]

CHOICES_WORDS_GOLD_FORMS = [
    ("B", f"{B}{{B}}", 1.0),
    ("B", "The answer is (B).", 1.0),
    ("B", "Answer: B", 1.0),
    ("B", r"\boxed{\text{(B)}}", 1.0),
    ("B", "The answer is (B) 42 because of the rule.", 1.0),
    ("B", f"{B}{{C}}", 0.0),
    ("B", f"{B}{{42}}", 0.0),
    ("(C)", f"{B}{{C}}", 1.0),
    ("C", r"\boxed{\textbf{(C)}}", 1.0),
    ("Monday", r"\boxed{\text{Monday}}", 1.0),
    ("Monday", r"\boxed{\text{monday}}", 1.0),
    ("Monday", r"\boxed{\text{Tuesday}}", 0.0),
    ("yes", "The final answer is Yes.", 1.0),
    ("$2^{3}$", f"{B}{{8}}", 1.0),
    ("$$\\frac{1}{4}$$", f"{B}{{0.25}}", 1.0),
    ("\\(\\frac{1}{4}\\)", f"{B}{{0.25}}", 1.0),
    ("\\[\\frac{1}{4}\\]", f"{B}{{0.25}}", 1.0),
    ("\\boxed{8}", f"{B}{{8}}", 1.0),
    ("We compute ... so the result is $\\boxed{\\frac{7}{2}}$.", f"{B}{{3.5}}", 1.0),
    ("She sold 48/2 = 24 clips in May.\n#### 72", f"{B}{{72}}", 1.0),
    ("She sold 48/2 = 24 clips in May.\n#### 72", f"{B}{{24}}", 0.0),
    ("#### 1,000", "The answer is 1000", 1.0),
    (72, f"{B}{{72}}", 1.0),
    (72, f"{B}{{72.0}}", 1.0),
    (0.5, r"\boxed{\frac{1}{2}}", 1.0),
    (None, f"{B}{{72}}", None),
    ("", f"{B}{{72}}", None),
    ("   ", f"{B}{{72}}", None),
    (["72"], f"{B}{{72}}", None),
    (float("nan"), f"{B}{{72}}", None),
]

EXTRACTION = [
    ("7", "The final answer is 7.", 1.0),  # unrewarded by TRL's accuracy_reward
    ("7", "Final answer: 7", 1.0),
    ("7", "**Answer:** 7", 1.0),
    ("7", "**Final Answer**\n\n$7$", 1.0),
    ("7", "The answer is $7$.", 1.0),
    ("7", "#### 7", 1.0),
    ("7", "The answer is: 7", 1.0),
    ("7", "I think it is 7", 0.0),  # no anchor and no box: no answer by default
    ("7", r"Answer \boxed{7}. Check: \boxed{1}", 0.0),  # the last box is the final answer
    ("1", r"Answer \boxed{7}. Check: \boxed{1}", 1.0),
    ("7", r"Try \boxed{3}; no wait, \boxed{7}", 1.0),
    ("7", r"<think>maybe \boxed{3}</think> so \boxed{7}", 1.0),
    ("3", r"<think>maybe \boxed{3}</think> so \boxed{7}", 0.0),
    ("7", r"reasoning... </think> The answer is 7.", 1.0),
    ("7", r"<think>it is \boxed{7} but I keep thinking", 0.0),  # reasoning never closed
    ("7", r"\boxed{\boxed{7}}", 1.0),
    ("7", r"The answer is \boxed{7", 1.0),  # unclosed box: anchor phrase still says 7
    ("7", r"\boxed{}", 0.0),
    ("7", "", 0.0),
    ("7", "   \n ", 0.0),
    ("7", r"The answer is 7 because 3+4=7.", 1.0),
    ("7", "The answer is 8. The answer is 7.", 1.0),
    ("3.5", "The answer is 3.5.", 1.0),
    ("\\frac{1}{2}", r"The final answer is $\dfrac{1}{2}$. I hope it is correct.", 1.0),
    ("(0, 3]", r"So the solution set is $\boxed{(0, 3]}$.", 1.0),
]

BAD_INPUT = [
    ("7", r"\boxed{" * 5000 + "7" + "}" * 5000, 1.0),  # deeply nested braces
    ("7", "(" * 5000 + "7" + ")" * 5000 + r" \boxed{7}", 1.0),
    ("7", r"\boxed{((((((((((((((((((((((((7}", 0.0),  # malformed LaTeX
    ("7", r"\boxed{\frac{}{}}", 0.0),
    ("7", r"\boxed{\\\\}", 0.0),
    ("7", "word " * 200_000 + r"\boxed{7}", 1.0),  # a megabyte of text
    ("7", "7 " * 300_000, 0.0),
    ("7", r"\boxed{" + "9" * 100_000 + "}", 0.0),
    ("7", "\x00\x01\ufffd" + r"\boxed{7}", 1.0),
    ("5", r"\boxed{10^{10^{10}}}", 0.0),  # settled by size, never evaluated
    ("5", r"\boxed{9^{9^{9}}}", 0.0),
    ("5", r"\boxed{10^{10^{10^{10}}}}", 0.0),
    (r"10^{10^{10}}", r"\boxed{10^{10^{10}}}", 1.0),
    ("1" + "0" * 5000, r"\boxed{10^{50000}}", 0.0),  # sizes differ by 45,000 digits
]

TABLE = (
    INTEGERS
    + SCIENTIFIC
    + FRACTIONS
    + PERCENT_UNITS
    + INTERVALS_SETS
    + MATRICES_COMPLEX_EQUATIONS
    + REORDERED_AND_LISTS
    + SYMBOLIC
    + CHOICES_WORDS_GOLD_FORMS
    + EXTRACTION
    + BAD_INPUT
)


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=2, timeout_s=10)
    yield reward
    reward.close()


def test_table_is_large_enough():
    assert len(TABLE) >= 200


@pytest.mark.parametrize("case", TABLE, ids=[_id(c) for c in TABLE])
def test_verdict(reward, case):
    gold, completion, expected = case
    (result,) = reward.details([completion], solution=[gold])
    assert result.score == expected, result.reason
    assert result.reason


def test_first_box_when_configured():
    first = MathEquivalence(boxed="first", symbolic=False)
    assert first([r"Answer \boxed{7}. Check: \boxed{1}"], solution=["7"]) == [1.0]


def test_last_number_fallback_only_when_configured():
    text = "so she has 3 + 4 = 7"
    assert MathEquivalence(symbolic=False)([text], solution=["7"]) == [0.0]
    assert MathEquivalence(symbolic=False, fallback_last_number=True)([text], solution=["7"]) == [1.0]


def test_gold_column_is_configurable_and_conversational_completions_work():
    reward = get_reward("math_equivalence", {"gold_column": "answer", "symbolic": False})
    completions = [[{"role": "assistant", "content": r"\boxed{4}"}], [{"role": "assistant", "content": "5"}]]
    assert reward(completions, answer=["4", "4"]) == [1.0, 0.0]
    (missing,) = reward.details([r"\boxed{4}"], solution=["4"])
    assert missing.score is None and "answer" in missing.reason


def test_tolerance_is_configurable():
    strict = MathEquivalence(rel_tol=0.0, symbolic=False)
    loose = MathEquivalence(rel_tol=0.01, symbolic=False)
    assert strict([r"\boxed{0.3333333}"], solution=[r"\frac{1}{3}"]) == [0.0]
    assert loose([r"\boxed{0.333}"], solution=[r"\frac{1}{3}"]) == [1.0]
    assert loose([r"\boxed{101}"], solution=["100"]) == [0.0]  # integers stay exact


def test_reason_names_both_sides_and_the_rule():
    (result,) = MathEquivalence(symbolic=False).details([r"work... \boxed{\dfrac{1}{2}}"], solution=["$0.5$"])
    assert result.score == 1.0
    assert "'0.5'" in result.reason and r"'\\dfrac{1}{2}'" in result.reason and "last \\boxed" in result.reason
    assert "equal as numbers" in result.reason
    assert result.gold == "0.5" and result.extracted == r"\dfrac{1}{2}"


def test_undecided_pairs_are_unscorable_when_symbolic_is_off():
    (result,) = MathEquivalence(symbolic=False).details([r"\boxed{(x-1)(x+1)}"], solution=["x^2-1"])
    assert result.score is None and "symbolic" in result.reason


def test_non_text_completions_are_unscorable():
    reward = MathEquivalence(symbolic=False)
    assert reward([None, 7, {"content": None}], solution=["7", "7", "7"]) == [None, None, None]


def test_gold_cache_is_bounded():
    reward = MathEquivalence(symbolic=False, cache_size=8)
    golds = [str(i) for i in range(50)]
    assert reward([rf"\boxed{{{g}}}" for g in golds], solution=golds) == [1.0] * 50
    assert len(reward._golds) == 8


def test_invalid_config_raises_at_construction():
    from rewardsmith import ConfigError

    with pytest.raises(ConfigError, match="timeout_s"):
        MathEquivalence(timeout_s=0)
    with pytest.raises(ConfigError, match="boxed"):
        MathEquivalence(boxed="middle")
    with pytest.raises(ConfigError, match="unknown_option"):
        MathEquivalence(unknown_option=1)
