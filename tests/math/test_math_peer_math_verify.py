# ruff: noqa: E501  (the copied cases are long strings, kept verbatim)
"""math-verify's own test cases, run through ``math_equivalence`` (gold column = their gold, completion = their
prediction); part 1 of 2 (``test_math_peer_math_verify_2.py`` holds the rest of the agreeing cases and the
pinned differences).

The (gold, prediction, expected) triples are copied from huggingface/Math-Verify's tests (``tests/test_all.py``,
``test_boxed.py``, ``test_numina_cases.py``, ``test_open_thoughts.py``; MIT License, Copyright (c) 2024 The
HuggingFace Team); duplicates are dropped. Of 224 distinct cases rewardsmith agrees on 181 with its defaults and on
3 more with ``decimal_comma=True`` (math-verify reads ``1000,99`` as a decimal by default). The rest are
design differences, pinned here so that any change to them is deliberate:

- ``NO_ANCHOR`` (37): math-verify extracts an answer from free text with no box and no answer phrase
  ("Therefore $x \\geq 5$ is the solution."); by default rewardsmith needs a ``\\boxed{}``, an answer phrase, or a
  completion that is only the answer, so these score 0.0 ("no final answer found"). With the opt-in
  ``fallback_last_math`` and ``fallback_last_number`` it agrees with math-verify on 32 of them.
- ``OTHER`` (3): cases whose gold is itself odd, each with its note.
"""

from __future__ import annotations

import pytest

from rewardsmith.rewards.math.reward import MathEquivalence
from tests.support.verdict_ids import case_id as _id

# (gold, prediction, math-verify's expected verdict), which rewardsmith reproduces
AGREE = [
    ("-5", "-5", 1.0),
    ("7425000", "7,425,000", 1.0),
    ("1000", "1000.0", 1.0),
    ("1000.0", "1,000.0", 1.0),
    ("0.4", ".4", 1.0),
    ("1000.99", "1,000.99", 1.0),
    ("2", "AZYUK2A", 0.0),
    ("10/9", "\\frac{10}{9}", 1.0),
    ("-10/9", "-\\frac{10}{9}", 1.0),
    ("$[0,1)$", "$[0,1)$", 1.0),
    ("$[0,9)$", "$[0,1)$", 0.0),
    ("$(0,9)$", "$[0,9)$", 0.0),
    ("$1$", "$-[0,1)$", 0.0),
    ("$9$", "Answer $ \n 9 \n $", 0.0),
    ("$9$", "Answer \\( \n 9 \n \\)", 0.0),
    ("$1/3$", "$\\frac13 $", 1.0),
    ("$1$", "$\\frac3{3} $", 1.0),
    ("$\\sqrt{3}$", "$\\sqrt3 $", 1.0),
    ("$1/3$", "$\\cfrac{1}{3} $", 1.0),
    ("$1/3$", "$\\dfrac{1}{3} $", 1.0),
    ("$1/3$", "$\\tfrac{1}{3} $", 1.0),
    ("$1/3$", "$ 1/3 $", 1.0),
    ("$1/3$", "$\\left( \\frac{1}{3} \\right)$", 1.0),
    ("$1/3$", "$\\boxed{\\frac{1}{3}}$", 1.0),
    ("$1/3$", "$\\frac{1}{3} \\text{meters}$", 1.0),
    ("$1/3$", "$\\frac{1}{3} \\textbf{meters}$", 1.0),
    ("$1/3$", "$k = \\frac{1}{3}$", 1.0),
    ("$28\\%$", "$\\boxed{28}$ pct", 1.0),
    ("$28\\%$", "$\\boxed{28 pct}", 1.0),
    ("$28\\%$", "$\\boxed{28 percent}", 1.0),
    ("$28\\%$", "$\\boxed{28 percentage}", 1.0),
    ("$2-2p$", "Since $x<2$, it follows that $|x-2|=2-x$. If $2-x=p$, then $x=2-p$. Thus $x-p=\\boxed{2-2p}$.", 1.0),
    (
        "\\boxed{\n\\begin{pmatrix} 0 & 3 \\\\ 0 & -1 \\end{pmatrix}\n}.\n\\end{align*}",
        "\\boxed{\n\\begin{pmatrix} 0 & 3 \\\\ 0 & -1 \\end{pmatrix}\n}.\n\\end{align*}",
        1.0,
    ),
    (
        "Let's assume the stock's value at the beginning of Monday is $100 . $ After losing $10 \\%$ of its value on Monday, the stock's value becomes $100 - 100 \\cdot 10 \\%=100 - 10 =90 . $ On Tuesday, the stock loses $20 \\%$ of this new value, which is $90 \\cdot 20 \\%=18 . $ Therefore, the stock's value at the end of Tuesday is $90 - 18 =72 . $ The overall percent loss in value from the beginning of Monday to the end of Tuesday is calculated as follows: \\begin{align*} \\text{Percent Loss} &= \\frac{\\text{Initial Value} - \\text{Final Value}}{\\text{Initial Value}} \\cdot 100 \\% \\ &= \\frac{100 - 72}{100} \\cdot 100 \\% \\ &= \\frac{28}{100} \\cdot 100 \\% \\ &= 28 \\%. \\end{align*} Final Answer: The final answer is $28 \\%$. I hope it is correct. Note: The solution provided is incorrect. The correct approach is as follows: The stock loses $10 \\%$ of its value on Monday, so it retains $100 \\% - 10 \\%=90 \\%$ of its value. On Tuesday, it loses $20 \\%$ of this new value, so it retains $100 \\% - 20 \\%=80 \\%$ of its Monday value. Therefore, it retains $90 \\% \\cdot 80 \\%=0.9 \\cdot 0.8=0.72=72 \\%$ of its original value. The overall percent loss in value is $100 \\% - 72 \\%=28 \\%$. Final Answer: The final answer is $28 \\%$. I hope it is correct. Note: The solution provided is incorrect. The correct approach is as follows: The stock loses $10 \\%$ of its value on Monday, so it retains $100 \\% - 10 \\%=90 \\%$ of its value. On Tuesday, it loses $20 \\%$ of this new value, so it retains $100 \\% - 20 \\%=80 \\%$ of its Monday value. Therefore, it retains $90 \\% \\cdot 80 \\%=0.9 \\cdot 0.8=0.72=72 \\%$ of its original value. The overall percent loss in value is $100 \\% - 72 \\%=28 \\%$. Final Answer: The final answer is $28 \\%$. I hope it is correct. Note: The solution provided is incorrect. The correct approach is as follows:",
        "If its initial value was $x$, after Monday, its value is $.9x$, and after a further $20\\%$ loss, its value becomes $.8\\cdot .9x = .72x$, making for a total loss of $\\boxed{28\\%}$.",
        1.0,
    ),
    (
        "In order for $N$ to be divisible by 12, $N$ must be divisible by $4$ and $3$. That means the last two digits $AB$ must form a multiple of $4.$ Since $A$ and $B$ are nonzero digits, the smallest possible $14{,}9AB$ that is divisible by 4 is $14{,}912.$ Unfortunately, this number is not a multiple of $3$, since $1 + 4 + 9 + 1 + 2 = 17.$ However, our next possibility, $14{,}916,$ is a multiple of $3,$ since $1 + 4 + 9 + 1 + 6 = 21.$ Therefore, $\\boxed{14{,}916}$ is our answer.",
        "For a number to be divisible by 12, it must be divisible by both 3 and 4. For a number to be divisible by 3, the sum of its digits must be divisible by 3. For a number to be divisible by 4, the last two digits must be divisible by 4. Let's start by finding the smallest possible value for $B$ such that $N$ is divisible by 4. Since $N$ ends in $AB$, the smallest possible value for $B$ that makes $AB$ divisible by 4 is $B = 2$ (since $02$, $06$, $10$, etc., are all divisible by 4, but we're looking for the smallest nonzero value for $B$). Now, let's consider the divisibility by 3. The sum of the digits of $N$ is $1 + 4 + 9 + A + 2 = 16 + A + 2 = 18 + A$. For $N$ to be divisible by 3, $18 + A$ must be divisible by 3. Since $A$ is a digit, it can be any value from $1$ to $9$. The smallest value for $A$ that makes $18 + A$ divisible by 3 is $A = 1$ (since $18 + 1 = 19$, which is not divisible by 3, but $18 + 2 = 20$, which is also not divisible by 3, and so on). However, we need to ensure that $A$ and $B$ are both nonzero, so we'll look for the next smallest value of $A$ that makes $18 + A$ divisible by 3. The next smallest value is $A = 4$, since $18 + 4 = 22$, which is divisible by 3. Therefore, the smallest possible value for $N$ with $A = 4$ and $B = 2$ is $N = 14 {, }916$. This number is divisible by both 3 and 4, and thus by 12. Final Answer: The final answer is $14 {, }916$. I hope it is correct. Note: The solution provided assumes that $A$ and $B$ are digits that are nonzero, and it correctly identifies the conditions for divisibility by 3 and 4 to find the smallest possible value for $N$. However, it's important to double-check the conditions and calculations to ensure accuracy. Please let me know if you have any questions or if you would like a different problem or solution. Thank you! [Note: The solution provided is correct, but it's always a good idea to double-check the calculations and reasoning, especially for more complex problems. If you have any questions or need further clarification, please feel free to ask. Thank you!] [Note: The solution provided is correct, but it's always a good idea to double-check the calculations and reasoning, especially for more complex problems. If you have any questions or need further clarification, please feel free to ask. Thank you!] [Note: The solution provided is correct, but it's always a good idea to double-check the calculations and reasoning, especially for more complex problems. If you have any questions or need further clarification, please feel free to ask. Thank you!] [Note: The solution provided is correct, but it's always a good idea to double-check the calculations and reasoning, especially for more complex problems. If you have any questions or need further clarification, please feel free to ask. Thank you!] [Note: The solution provided is correct, but it's always a good idea to double-check the calculations and reasoning, especially for more complex problems. If you have any questions or need further clarification, please feel free to ask. Thank you!] [Note: The solution provided is correct, but it's always a good idea to double-check the calculations and reasoning, especially for more complex problems. If you have any questions or need further clarification, please feel free to ask. Thank you!] [Note",
        1.0,
    ),
    (
        "Since $25<30<36$, we have $5<\\sqrt{30}<6$. We also know that $7^2=49$, so $\\sqrt{50}\\approx7$. As a result, $(5+7)<\\sqrt{30}+\\sqrt{50}<(6+7)$, so the sum is located between $\\boxed{12\\text{ and }13}$. To be more precise, $\\sqrt{50}>7$, but we're still able to say that $\\sqrt{30}+\\sqrt{50}<(6+7)$ when we add a slightly greater quantity to the left side since the difference between $6$ and $\\sqrt{30}$ is much greater than the difference between $\\sqrt{50}$ and $7$.",
        'We have that \\begin{align*} \\sqrt{30 } + \\sqrt{50 }&=\\sqrt{30 } + \\sqrt{25 \\cdot2 } \\ &=\\sqrt{30 } + 5 \\sqrt{2 } \\ &\\approx5.477 + 5 \\cdot1.414 \\ &\\approx5.477 + 7.07 \\ &\\approx12.547. \\end{align*}Therefore, the graph of the sum $\\sqrt{30 } + \\sqrt{50 }$ is located between $\\boxed{12 $ and $13 }. $ Final Answer: The final answer is \\"$12 $ and $13 $\\". I hope it is correct.',
        1.0,
    ),
    (
        "$(3, \\frac{\\pi}{2})$",
        'We have that $r = \\\\sqrt{0^2 + 3^2} = 3.$  Also, if we draw the line connecting the origin and $(0,3),$ this line makes an angle of $\\\\frac{\\\\pi}{2}$ with the positive $x$-axis.\\n\\n[asy]\\nunitsize(0.8 cm);\\n\\ndraw((-0.5,0)--(3.5,0));\\ndraw((0,-0.5)--(0,3.5));\\ndraw(arc((0,0),3,0,90),red,Arrow(6));\\n\\ndot((0,3), red);\\nlabel(\\"$(0,3)$\\", (0,3), W);\\ndot((3,0), red);\\n[/asy]\\n\\nTherefore, the polar coordinates are $\\\\boxed{\\\\left( 3, \\\\frac{\\\\pi}{2} \\\\right)}.$',
        1.0,
    ),
    (
        "$\\frac{14}{3}$",
        "$f(-2)+f(-1)+f(0)=\\frac{3(-2)-2}{-2-2}+\\frac{3(-1)-2}{-1-2}+\\frac{3(0)-2}{0-2}=\\frac{-8}{-4}+\\frac{-5}{-3}+\\frac{-2}{-2}=2+\\frac{5}{3}+1=\\boxed{\\frac{14}{3}}$",
        1.0,
    ),
    (
        "$\\text{Evelyn}$",
        "Evelyn covered more distance in less time than Briana, Debra and Angela, so her average speed is greater than any of their average speeds. Evelyn went almost as far as Carla in less than half the time that it took Carla, so Evelyn's average speed is also greater than Carla's. Therefore, $\\boxed{\\text{Evelyn}}$ is our answer.",
        1.0,
    ),
    (
        "$90^\\circ$",
        "For the first line, let $t = 2x = 3y = -z.$  Then \\[\\begin{pmatrix} x \\\\ y \\\\ z \\end{pmatrix} = \\begin{pmatrix} t/2 \\\\ t/3 \\\\ -t \\end{pmatrix} = \\frac{t}{6} \\begin{pmatrix} 3 \\\\ 2 \\\\ -6 \\end{pmatrix}.\\]Thus, the direction vector of the first line is $\\begin{pmatrix} 3 \\\\ 2 \\\\ -6 \\end{pmatrix}.$ For the second line, let $t = 6x = -y = -4z.$  Then \\[\\begin{pmatrix} x \\\\ y \\\\ z \\end{pmatrix} = \\begin{pmatrix} t/6 \\\\ -t \\\\ -t/4 \\end{pmatrix} = \\frac{t}{12} \\begin{pmatrix} 2 \\\\ -12 \\\\ -3 \\end{pmatrix}.\\]Thus, the direction vector of the first line is $\\begin{pmatrix} 2 \\\\ -12 \\\\ -3 \\end{pmatrix}.$ Note that \\[\\begin{pmatrix} 3 \\\\ 2 \\\\ -6 \\end{pmatrix} \\cdot \\begin{pmatrix} 2 \\\\ -12 \\\\ -3 \\end{pmatrix} = 0.\\]Hence, the angle between the lines is $\\boxed{90^\\circ}.$",
        1.0,
    ),
    (
        "$3\\sqrt{13}$",
        "We use the distance formula:  \\begin{align*} \\sqrt{(2 - (-4))^2 + ((-6) - 3)^2} &= \\sqrt{6^2 + (-9)^2}\\\\ & = \\sqrt{36 + 81}\\\\ & = \\sqrt{117} = \\boxed{3\\sqrt{13}}. \\end{align*}",
        1.0,
    ),
    (
        "$\\frac{3}{56}$",
        "We also know that $q(-1) = ((-1)^2 - 1)p(-1) + 1 = 1.$  Setting $x = -1$ in the equation above, we get \\[q(-1) = 20160(-a + b),\\]so $-a + b = \\frac{1}{20160}.$  Solving for $a$ and $b,$ we find $a = -\\frac{29}{40320}$ and $b = -\\frac{3}{4480}.$  Hence, \\begin{align*} q(x) &= \\left( -\\frac{29}{40320} x - \\frac{3}{4480} \\right) (x - 2)(x - 3) \\dotsm (x - 7) \\\\ &= -\\frac{(29x + 27)(x - 2)(x - 3) \\dotsm (x - 7)}{40320}. \\end{align*}In particular, \\[q(8) = -\\frac{(29 \\cdot 8 + 27)(6)(5) \\dotsm (1)}{40320} = -\\frac{37}{8},\\]so \\[p(8) = \\frac{q(8) + 8}{8^2 - 1} = \\boxed{\\frac{3}{56}}.\\]",
        1.0,
    ),
    (
        "$2$",
        "Of the two-digit perfect squares, only $4^2=16$ and $6^2=36$ end in $6$. Thus, there are $\\boxed{2}$ distinct possible values for $B$.",
        1.0,
    ),
    (
        "$15\\mbox{ cm}^2$",
        "The shaded triangle has a base of length $10\\text{ cm}.$ Since the triangle is enclosed in a rectangle of height $3\\text{ cm},$ then the height of the triangle is $3\\text{ cm}.$ (We know that the enclosing shape is a rectangle, because any figure with four sides, including two pairs of equal opposite sides, and two right angles must be a rectangle.) Therefore, the area of the triangle is $$\\frac{1}{2}\\times 3 \\times 10 = \\boxed{15\\mbox{ cm}^2}.$$",
        1.0,
    ),
    (
        "$-2,1$",
        "By the Integer Root Theorem, the possible integer roots are all the divisors of 14 (including negative divisors), which are $-14,$ $-7,$ $-2,$ $-1,$ $1,$ $2,$ $7,$ and $14.$  Checking, we find that the only integer roots are $\\boxed{-2,1}.$",
        1.0,
    ),
    (
        "$9$",
        "We use the property that $a \\equiv b \\pmod{m}$ implies $a^c \\equiv b^c \\pmod{m}$. Since $129 \\equiv -3 \\pmod{11}$ and $96 \\equiv -3 \\pmod{11}$, we have  $$129^{34}+96^{38} \\equiv (-3)^{34}+(-3)^{38} \\equiv 3^{34}+3^{38} \\pmod{11}.$$ Since $3^5 \\equiv 1 \\pmod{11},$ we can see that $3^{34} = (3^5)^{6} \\cdot 3^4$ and $3^{38} = (3^5)^{7} \\cdot 3^3.$ Then, $129^{34}+96^{38} \\equiv \\boxed{9} \\pmod{11}.$",
        1.0,
    ),
    (
        "$90^\\circ$",
        "Therefore, \\begin{align*} \\angle BAC &= \\angle BAD + \\angle DAC \\\\ &= 50^\\circ+40^\\circ \\\\ &= \\boxed{90^\\circ}. \\end{align*}",
        1.0,
    ),
    (
        "$0$",
        "Note that $p(x)$ has degree at most 2.  Also, $p(a) = p(b) = p(c) = 1.$  Thus, the polynomials $p(x)$ and 1 agree at three different values, so by the Identity Theorem, they are the same polynomial.  Hence, the degree of $p(x)$ (which is the constant polynomial 1) is $\\boxed{0}.$",
        1.0,
    ),
    (
        "$204_5$",
        "We may carry out long division in base 5 just as in base 10. We have  \\[ \\begin{array}{c|ccc} \\multicolumn{2}{r}{2} & 0 & 4 \\\\ \\cline{2-4} 2 & 4 & 1 & 3 \\\\ \\multicolumn{2}{r}{4} & \\downarrow & \\\\ \\cline{2-2} \\multicolumn{2}{r}{0} & 1 & \\\\ \\multicolumn{2}{r}{} & 0 & \\downarrow \\\\ \\cline{3-3} \\multicolumn{2}{r}{} & 1 & 3 \\\\ \\multicolumn{2}{r}{} & 1 & 3 \\\\ \\cline{3-4} \\multicolumn{2}{r}{} & & 0 \\end{array} \\]for a quotient of $\\boxed{204_5}$. Note that in the above calculation we have used that $13_5$ divided by $2_5$ is $4_5$, which follows from $4_5\\times2_5=8_{10}=13_5$.",
        1.0,
    ),
    (
        "$(6,31,-1)$",
        "Let $\\alpha$ be a root of $x^3 - 3x^2 + 4x - 1 = 0,$ so $\\alpha^3 = 3 \\alpha^2 - 4 \\alpha + 1.$ Then solving the system of equations, we find $(p,q,r) = \\boxed{(6,31,-1)}.$",
        1.0,
    ),
    (
        "$1 \\pm \\sqrt{19}$",
        "This simplifies to $64y + 1920 = 0,$ so $y = -30.$ Then $x^2 - 2x - 48 = -30,$ or $x^2 - 2x - 18 = 0.$ By the quadratic formula, $x = \\boxed{1 \\pm \\sqrt{19}}.$",
        1.0,
    ),
    (
        "$3 \\pm 2 \\sqrt{2}$",
        "This gives us $x^2 + 1 = 6x,$ or $x^2 - 6x + 1 = 0.$ By the quadratic formula, the roots are $x = \\boxed{3 \\pm 2 \\sqrt{2}}.$",
        1.0,
    ),
    (
        "$\\{1\\pm\\sqrt{5},-2\\}$",
        "The roots of $P(x)$ are $-2$ and $1 \\pm \\sqrt{5}$, so the answer is $\\boxed{\\{1\\pm\\sqrt{5},-2\\}}.$",
        1.0,
    ),
    (
        "$f(2) < f(1) < f(4)$",
        'The graph of $f(x) = x^2 + bx + c$ is an upward-facing parabola, and the condition\n\\[f(2 + t) = f(2 - t)\\]tells us that the axis of symmetry of the parabola is the line $x = 2.$  Thus, $f(x)$ is an increasing function of $|x - 2|.$  In other words, the farther $x$ is from 2, the greater $f(x)$ is.\n\n[asy]\nunitsize(1.5 cm);\n\nreal parab (real x) {\n  return (x^2/4);\n}\n\ndraw(graph(parab,-2,2),red);\ndraw((0,-0.5)--(0,2),dashed);\n\nlabel("$x = 2$", (0,2), N);\ndot("$(2,f(2))$", (0,0), SE);\ndot("$(1,f(1))$", (-0.8,parab(-0.8)), SW);\ndot("$(4,f(4))$", (1.6,parab(1.6)), SE);\n[/asy]\n\nHence, $\\boxed{f(2) < f(1) < f(4)}.$',
        1.0,
    ),
    (
        "$2 \\sin b \\cos a$",
        "By sum-to-product,\n\\[\\sin (a + b) - \\sin (a - b) = \\boxed{2 \\sin b \\cos a}.\\]",
        1.0,
    ),
    (
        "$\\frac{\\pi r}{h+r}$",
        "Since $rs = A$, where $r$ is the inradius, $s$ is the semiperimeter, and $A$ is the area, we have that the ratio of the area of the circle to the area of the triangle is $\\frac{\\pi r^2}{rs} = \\frac{\\pi r}{s}$. Now we try to express $s$ as $h$ and $r$. Denote the points where the incircle meets the triangle as $X,Y,Z$, where $O$ is the incenter, and denote $AX = AY = z, BX = BZ = y, CY = CZ = x$. Since $XOZB$ is a square (tangents are perpendicular to radius), $r = BX = BZ = y$. The perimeter can be expressed as $2(x+y+z)$, so the semiperimeter is $x+y+z$. The hypotenuse is $AY+CY = z+x$. Thus we have $s = x+y+z = (z+x)+y = h+r$. The answer is $\\boxed{\\frac{\\pi r}{h+r}}$.'], Pred: ['Since $rs = A$, where $r$ is the inradius, $s$ is the semiperimeter, and $A$ is the area, we have that the ratio of the area of the circle to the area of the triangle is $\\frac{\\pi r^2}{rs} = \\frac{\\pi r}{s}$. Now we try to express $s$ as $h$ and $r$. Denote the points where the incircle meets the triangle as $X,Y,Z$, where $O$ is the incenter, and denote $AX = AY = z, BX = BZ = y, CY = CZ = x$. Since $XOZB$ is a square (tangents are perpendicular to radius), $r = BX = BZ = y$. The perimeter can be expressed as $2(x+y+z)$, so the semiperimeter is $x+y+z$. The hypotenuse is $AY+CY = z+x$. Thus we have $s = x+y+z = (z+x)+y = h+r$. The answer is $\\boxed{\\frac{\\pi r}{h+r}}$.",
        1.0,
    ),
    ("$125$ miles", "The distance is $\\boxed{125\\textnormal{ miles}}.$", 1.0),
    (
        "$[-1, -\\frac{1}{2}) \\cup (-\\frac{1}{2}, 0) \\cup (0, 1) \\cup (1, \\infty)$",
        "The solution set is $\\boxed{[-1, -\\tfrac12) \\cup (-\\tfrac12, 0) \\cup (0, 1) \\cup (1, \\infty)}.$",
        1.0,
    ),
    ("$\\sqrt{2}+\\sqrt{5}$", "The answer is $\\boxed{\\sqrt 2+\\sqrt 5}$", 1.0),
    ("$\\frac{9}{4}\\pi$", "Therefore $\\boxed{\\frac94\\pi}$.", 1.0),
    ("x \\in \\boxed{\\{-1\\} \\cup [0,7)}.$", "x \\in \\boxed{\\{-1\\} \\cup [0,7)}.$", 1.0),
    ("$x > 5$", "Therefore $x < 5$ is the solution.", 0.0),
    ("$x \\geq 5$", "The solution is $x \\leq 5$", 0.0),
    ("$x \\leq 5$", "$5 \\geq x$", 1.0),
    ("$x \\geq 5$", "$5 \\leq x$", 1.0),
    ("$x = 11$", "$x = 5+5+1 = 7 =11$", 1.0),
    ("$7 = 11a+c$", "$11a+c$", 0.0),
    ("$x = 1/3$", "$x = 5+5+1 = 1/3 \\approx 11$", 1.0),
    ("$11$", "$x=11$", 1.0),
    ("$11$", "$x\\approx11$", 1.0),
    ("$1/3$", "$x=1/3\\approx1.3$", 1.0),
    ("$x < 1$", "$-x > -1$", 1.0),
    ("$x < 1$", "$x > -1$", 0.0),
    ("$x <= 1$", "$-x >= -1$", 1.0),
    ("$a +3z = 0$", "$0$", 0.0),
    ("$1 = \\zzz = x = 0$", "$0$", 1.0),
    ("$2x + z = 1$", "$1$", 0.0),
    ("$a^2 + b = 0$", "$0$", 0.0),
    ("$k=1$", "$1$", 1.0),
    ("$1$", "$k=1$", 1.0),
    ("$z = 1 + 1 = 2$", "$z = 3+3 = 2$", 1.0),
    ("$2x+4y-3=0$", "$y=-\\frac{1}{2}x+\\frac{3}{4}$", 1.0),
    ("$x^2/4 + y^2/3 = 1$", "$x^2/16 + y^2/12 = 1/4$", 1.0),
    (
        "$189$",
        "9=189.\n\nTherefore, answer is 189.\n\nAnother thought: The asy code draws a trapezoid, but it might not be a right trapezoid? Wait, no, two right angles are drawn at (0,0) and (0,9). So sides AD and DC are perpendicular. So it's a right trapezoid.\n\nWait, in this case, AD is vertical, length 9 cm, and DC is top base, length 15 cm, and AB is bottom base, length 27 cm. So area is (15 +27)/2 *9=189.\n\nSo regardless of what the labels say, the coordinates give us the necessary bases and height.\n\nAlternatively, thinking that maybe the 5 cm is a different component. Let me think, if the height is 3 cm, but the coordinate says 9. No, that's conflicting.\n\nAlternatively, it's a different way of measuring, but given that Asymptote is accurate with coordinates, I think safe to go with 189.\n\n**Final Answer**\n\\boxed{189}\n</think>\n\nTo find the area of the trapezoid, we can use the coordinates of the vertices provided in the Asymptote code. The vertices are A(0,0), B(27,0), C(15,9), and D(0,9).\n\nUsing the shoelace formula:\n\\[\n\\text{Area} = \\frac{1}{2} \\left| (x_1y_2 + x_2y_3 + x_3y_4 + x_4y_1) - (y_1x_2 + y_2x_3 + y_3x_4 + y_4x_1) \\right|\n\\]\nSubstituting the coordinates:\n\\[\n\\text{Sum1} = (0 \\cdot 0) + (27 \\cdot 9) + (15 \\cdot 9) + (0 \\cdot 0) = 0 + 243 + 135 + 0 = 378\n\\]\n\\[\n\\text{Sum2} = (0 \\cdot 27) + (0 \\cdot 15) + (9 \\cdot 0) + (9 \\cdot 0) = 0 + 0 + 0 + 0 = 0\n\\]\n\\[\n\\text{Area} = \\frac{1}{2} |378 - 0| = \\frac{1}{2} \\times 378 = 189\n\\]\n\nThus, the area of the trapezoid is \\(\\boxed{189}\\) square centimeters.",
        1.0,
    ),
    (
        "$\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}$",
        "The matrix is $\\begin{pmatrix}1 & 2 \\\\ 3 & 5\\end{pmatrix}$",
        0.0,
    ),
    (
        "$[0,1)$",
        "For the function $q(x)$ to be defined, both the numerator and the denominator must be real numbers, and the denominator must not be zero. 1. The square root in the numerator is defined only for non-negative values of $x$, so $x \\geq 0$. 2. The square root in the denominator is defined only for values of $1 - x^2 > 0$, which implies $x^2 < 1$. This gives $-1 < x < 1$. 3. The denominator cannot be zero, so $1 - x^2 \\neq 0$, which implies $x \\neq \\pm 1$. Combining these conditions, we find that the domain of $q(x)$ is the interval $(0, 1)$, since $x$ must be greater than or equal to 0 and less than 1, but not equal to 1. Final Answer: The final answer is $(0, 1)$. I hope it is correct. <|im_start|>user",
        0.0,
    ),
    (
        "$[-3,2]$",
        "To find the domain of the function $\\sqrt{6-x-x^2}$, we need to determine for which values of $x$ the expression inside the square root is non-negative, i.e., $6-x-x^2 \\ge 0$. First, let's find the roots of the quadratic equation $x^2 + x - 6 = 0$. We can factor this equation as $(x+3)(x-2) = 0$. So, the roots are $x = -3$ and $x = 2$. Now, we can analyze the sign of the quadratic expression $x^2 + x - 6$ between the roots and outside the roots. Since the coefficient of $x^2$ is positive, the parabola opens upwards, and the expression is positive outside the roots and negative between the roots. Therefore, the domain of the function $\\sqrt{6-x-x^2}$ is the interval between the roots, which is $\\boxed{[-3, 2]}$. Final Answer: The final answer is $[-3, 2]$. I hope it is correct. I apologize for the mistake in the previous solution. Let me correct it. To find the domain of the function $\\sqrt{6-x-x^2}$, we need to determine for which values of $x$ the expression inside the square root is non-negative, i.e., $6-x-x^2 \\ge 0$. First, let's find the roots of the quadratic equation $x^2 + x - 6 = 0$. We can factor this equation as $(x+3)(x-2) = 0$. So, the roots are $x = -3$ and $x = 2$. Now, we can analyze the sign of the quadratic expression $x^2 + x - 6$ between the roots and outside the roots. Since the coefficient of $x^2$ is positive, the parabola opens upwards, and the expression is positive outside the roots and negative between the roots. Therefore, the domain of the function $\\sqrt{6-x-x^2}$ is the interval outside the roots, which is $\\boxed{(-\\infty, -3] \\cup [2, \\infty)}$. Final Answer: The final answer is $(-\\infty, -3] \\cup [2, \\infty)$. I hope it is correct. <|im_start|>user",
        0.0,
    ),
    (
        "$16386.20$",
        "To find the value of her investment after 5 years, we can use the formula for compound interest: \\[A = P \\left(1 + \\frac{r}{n}\\right)^{nt}\\] where $A$ is the final amount, $P$ is the principal (initial investment), $r$ is the annual interest rate (as a decimal), $n$ is the number of times the interest is compounded per year, and $t$ is the number of years. In this case, Paula invested $\\$10,\\!000$, so $P = \\$10,\\!000$. The interest rate is $10\\%$, which as a decimal is $r = 0.10$. The interest is compounded quarterly, so $n = 4$. The investment period is 5 years, so $t = 5$. Plugging these values into the formula, we get: \\[A = 10000 \\left(1 + \\frac{0.10}{4}\\right)^{4 \\cdot 5}\\] \\[A = 10000 \\left(1 + 0.025\\right)^{20}\\] \\[A = 10000 \\left(1.025\\right)^{20}\\] \\[A \\approx 10000 \\cdot 1.63862\\] \\[A \\approx 16386.20\\] Rounded to the nearest cent, Paula's investment is worth $\\boxed{\\$16,\\!386.20}$ at the end of the 5-year period. The answer is $16,\\!386.20$. I apologize for the repetition in my previous responses. Here is the correct solution: To find the value of her investment after 5 years, we can use the formula for compound interest: \\[A = P \\left(1 + \\frac{r}{n}\\right)^{nt}\\] where $A$ is the final amount, $P$ is the principal (initial investment), $r$ is the annual interest rate (as a decimal), $n$ is the number of times the interest is compounded per year, and $t$ is the number of years. In this",
        1.0,
    ),
    (
        "$120$",
        "We can find the volume of pyramid $ABCH$ by using the formula for the volume of a pyramid: $\\frac{1}{3} \\times \\text{base area} \\times \\text{height}$. The base of pyramid $ABCH$ is triangle $ABC$, which is a right triangle with legs of length 5 and 6. Therefore, the base area is $\\frac{1}{2} \\times 5 \\times 6 = 15$. The height of pyramid $ABCH$ is the length of segment $AH$, which is the same as the height of the rectangular prism $ABCDEFGH$. Let's call this height $h$. We are given that the volume of pyramid $ABCH$ is 20, so we have $\\frac{1}{3} \\times 15 \\times h = 20$. Simplifying, we get $5h = 20$, so $h = 4$. Now, to find the volume of rectangular prism $ABCDEFGH$, we can use the formula for the volume of a rectangular prism: $\\text{length} \\times \\text{width} \\times \\text{height}$. The length is 5, the width is 6, and the height is 4. Therefore, the volume of rectangular prism $ABCDEFGH$ is $5 \\times 6 \\times 4 = 120$. Final Answer: The volume of $ABCDEFGH$ is 120. I hope it is correct.",
        1.0,
    ),
    (
        "12000023",
        "To find the integers congruent to 3 (mod 7), we can find the remainder when each integer is divided by 7. For 85, the remainder is $85 \\mod 7 = 1$. For 49,479, the remainder is $49,\\!479 \\mod 7 = 3$. For -67, the remainder is $-67 \\mod 7 = 4$. For 12,000,003, the remainder is $12,\\!000,\\!003 \\mod 7 = 5$. For -3, the remainder is $-3 \\mod 7 = 4$. The only integer congruent to 3 (mod 7) is 49,479. Therefore, we remove this integer from the list and sum the remaining integers: $85 + (-67) + 12,\\!000,\\!003 + (-3) = 12,\\!000,\\!023$. Final Answer: The final answer is 12,000,023. I hope it is correct. <|im_start|>user",
        1.0,
    ),
    (
        "$14916$",
        "For a number to be divisible by 12, it must be divisible by both 3 and 4. First, let's consider the divisibility rule for 3. A number is divisible by 3 if the sum of its digits is divisible by 3. In this case, the sum of the digits is $1 + 4 + 9 + A + B = 14 + A + B$. Since $A$ and $B$ are nonzero digits, the smallest possible value for $A + B$ is $1 + 2 = 3$. Therefore, the smallest possible value for the sum of the digits is $14 + 3 = 17$. The smallest multiple of 3 greater than 17 is 18, so we need $A + B = 4$. Next, let's consider the divisibility rule for 4. A number is divisible by 4 if the last two digits form a number divisible by 4. In this case, the last two digits are $AB$. Since $A$ and $B$ are nonzero, the smallest possible value for $AB$ that is divisible by 4 is $12$. Now, we need to find the smallest possible value for $N$ given that $A + B = 4$ and $AB = 12$. The smallest possible values for $A$ and $B$ that satisfy these conditions are $A = 2$ and $B = 2$. Therefore, the smallest possible value for $N$ is $14{,}922$. Final Answer: The smallest possible value of $N$ is $\\boxed{14{,}916}$. I hope it is correct. <|im_start|>user",
        1.0,
    ),
    (
        "$\\\\left(\\\\frac{1}{5},\\\\frac{1}{6}\\\\right)$",
        "We can find the projection of $\\mathbf{a}$ onto $P$ by taking the projection of $\\mathbf{a}$ onto $\\mathbf{b}$ and $\\mathbf{c}$ and then taking their sum. The projection of $\\mathbf{a}$ onto $\\mathbf{b}$ is given by \\[\\operatorname{proj}_{\\mathbf{b}} \\mathbf{a} = \\frac{\\mathbf{a} \\cdot \\mathbf{b}}{\\|\\mathbf{b}\\|^2} \\mathbf{b} = \\frac{1}{5} \\mathbf{b},\\]since $\\mathbf{a} \\cdot \\mathbf{b} = \\|\\mathbf{a}\\| \\|\\mathbf{b}\\| \\cos \\theta = 1 \\cdot 1 \\cdot \\frac{1}{5} = \\frac{1}{5}$ and $\\|\\mathbf{b}\\| = 1.$ Similarly, the projection of $\\mathbf{a}$ onto $\\mathbf{c}$ is given by \\[\\operatorname{proj}_{\\mathbf{c}} \\mathbf{a} = \\frac{\\mathbf{a} \\cdot \\mathbf{c}}{\\|\\mathbf{c}\\|^2} \\mathbf{c} = \\frac{1}{6} \\mathbf{c},\\]since $\\mathbf{a} \\cdot \\mathbf{c} = \\|\\mathbf{a}\\| \\|\\mathbf{c}\\| \\cos \\theta = 1 \\cdot 1 \\cdot \\frac{1}{6} = \\frac{1}{6}$ and $\\|\\mathbf{c}\\| = 1.$ Therefore, the projection of $\\mathbf{a}$ onto $P$ is \\[\\operatorname{proj}_{P} \\mathbf{a} = \\operatorname{proj}_{\\mathbf{b}} \\mathbf{a} + \\operatorname{proj}_{\\mathbf{c}} \\mathbf{a} = \\frac{1}{5} \\mathbf{b} + \\frac{1}{6} \\mathbf{c}.\\]Thus, $(p,q) = \\boxed{\\left( \\frac{1}{5}, \\frac{1}{6} \\right)}.$ Final Answer: The final answer is $\\left( \\frac{1}{5}, \\frac{1}{6} \\right)$. I hope it is correct. <|im_start|>user",
        1.0,
    ),
    (
        "$\\\\left(\\\\frac{4}{5},\\\\frac{1}{5}\\\\right)$",
        "Since $AP:PB = 1:4,$ we can write \\[\\frac{\\overrightarrow{P} - \\overrightarrow{A}}{1} = \\frac{\\overrightarrow{B} - \\overrightarrow{P}}{4}.\\]Isolating $\\overrightarrow{P},$ we find \\[\\overrightarrow{P} = \\frac{4}{5} \\overrightarrow{A} + \\frac{1}{5} \\overrightarrow{B}.\\]Thus, $(t,u) = \\boxed{\\left( \\frac{4}{5}, \\frac{1}{5} \\right)}.$ Final Answer: The final answer is $\\left( \\frac{4}{5}, \\frac{1}{5} \\right)$. I hope it is correct. <|im_start|>user",
        1.0,
    ),
    (
        "$\\frac{5\\sqrt{42}}{27}$",
        "We can start by simplifying each square root individually: \\begin{align*} \\sqrt{160} &= \\sqrt{16 \\cdot 10} = \\sqrt{16} \\cdot \\sqrt{10} = 4\\sqrt{10}, \\\\ \\sqrt{252} &= \\sqrt{36 \\cdot 7} = \\sqrt{36} \\cdot \\sqrt{7} = 6\\sqrt{7}, \\\\ \\sqrt{245} &= \\sqrt{49 \\cdot 5} = \\sqrt{49} \\cdot \\sqrt{5} = 7\\sqrt{5}, \\\\ \\sqrt{108} &= \\sqrt{36 \\cdot 3} = \\sqrt{36} \\cdot \\sqrt{3} = 6\\sqrt{3}. \\end{align*} Now we can substitute these values back into the original expression: \\begin{align*} \\frac{\\sqrt{160}}{\\sqrt{252}} \\times \\frac{\\sqrt{245}}{\\sqrt{108}} &= \\frac{4\\sqrt{10}}{6\\sqrt{7}} \\times \\frac{7\\sqrt{5}}{6\\sqrt{3}} \\\\ &= \\frac{4 \\cdot 7 \\cdot \\sqrt{10} \\cdot \\sqrt{5}}{6 \\cdot 6 \\cdot \\sqrt{7} \\cdot \\sqrt{3}} \\\\ &= \\frac{28\\sqrt{50}}{36\\sqrt{21}}. \\end{align*} To rationalize the denominator, we multiply the numerator and denominator by $\\sqrt{21}$: \\begin{align*} \\frac{28\\sqrt{50}}{36\\sqrt{21}} \\times \\frac{\\sqrt{21}}{\\sqrt{21}} &= \\frac{28\\sqrt{1050}}{36 \\cdot 21} \\\\ &= \\frac{28\\sqrt{1050}}{756}. \\end{align*} Finally, we simplify the square root: \\begin{align*} \\sqrt{1050} &= \\sqrt{100 \\cdot 10.5} = \\sqrt{100} \\cdot \\sqrt{10.5} = 10\\sqrt{10.5}. \\end{align*} Substituting this back into the expression, we get: \\begin{align*} \\frac{28\\sqrt{1050}}{756} &= \\frac{28 \\cdot 10\\sqrt{10.5}}{756} \\\\ &= \\frac{280\\sqrt{10.5}}{756} \\\\ &= \\frac{10\\sqrt{10.5}}{27}. \\end{align*} Final Answer: The final answer is $\\frac{10\\sqrt{10.5}}{27}$. I hope it is correct.",
        1.0,
    ),
]


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=2, timeout_s=10)
    yield reward
    reward.close()


def test_part_is_large():
    assert len(AGREE) >= 90


@pytest.mark.parametrize("case", AGREE, ids=[_id(c) for c in AGREE])
def test_agrees_with_math_verify(reward, case):
    gold, prediction, expected = case
    (result,) = reward.details([prediction], solution=[gold])
    assert result.score == expected, result.reason
