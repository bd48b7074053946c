# ruff: noqa: E501  (the copied cases are long strings, kept verbatim)
"""math-verify's own test cases, part 2 of 2 (source, licence and the meaning of each table: see
``test_math_peer_math_verify.py``): the rest of the agreeing cases, the ``decimal_comma`` cases, and the
pinned design differences ``NO_ANCHOR`` and ``OTHER``.
"""

from __future__ import annotations

import pytest

from rewardsmith.rewards.math.reward import MathEquivalence
from tests.support.verdict_ids import case_id as _id

# (gold, prediction, math-verify's expected verdict), which rewardsmith reproduces
AGREE = [
    (
        "$16386.17$",
        "When interest is compounded quarterly, the interest is applied four times per year. In this case, the interest rate per quarter is $10\\%/4 = 2.5\\%$. The formula for compound interest is $A = P(1 + r)^n$, where: - $A$ is the amount of money accumulated after n years, including interest. - $P$ is the principal amount (the initial amount of money). - $r$ is the annual interest rate (decimal). - $n$ is the number of years the money is invested. In this case, $P = \\$10,000$, $r = 0.025$ (2.5%), and $n = 5 \\times 4 = 20$ (since there are 20 quarters in 5 years). Plugging these values into the formula, we get: \\[A = 10000(1 + 0.025)^{20}.\\] Calculating this gives: \\[A \\approx 10000(1.025)^{20} \\approx 16386.169.\\] Rounded to the nearest cent, Paula's investment is worth $\\boxed{\\$16386.17}$ after 5 years. I hope it is correct. <|im_start|>user",
        1.0,
    ),
    (
        "Let the percentage of people in Mathopolis who are children be $x$. The percentage of adults is then $1-x$. Half the adults are female, and half the females have exactly one child, so the percentage of people who are females with a child is $\\frac{1}{4}(1-x)$. This percentage is equal to the percentage of children, since there is a correspondence between a mother and a child. So we have the equation $x=\\frac{1}{4}(1-x)$. Solving for $x$ yields $x=1/5$, or $\\boxed{20}$ percent.",
        "Let's denote the total number of adults in Mathopolis as $A$. Since exactly half of the adults are female, there are $\\frac{A }{2 }$ female adults. Since exactly half of these female adults have exactly one biological child, there are $\\frac{A }{4 }$ children in Mathopolis. Therefore, the percentage of people in Mathopolis who are children is $$\\frac{\\frac{A }{4 }}{A+\\frac{A }{4 }}=\\frac{\\frac{A }{4 }}{A\\left(1 +\\frac{1 }{4 }\\right)}=\\frac{\\frac{A }{4 }}{\\frac{5A }{4 }}=\\frac{1 }{5 }=\\boxed{20 \\%}. $$ Final Answer: The final answer is $20 \\%$. I hope it is correct. Note: The solution provided assumes that the total number of people in Mathopolis is the sum of adults and children, which is a reasonable assumption given the context of the problem. However, the problem does not explicitly state this, so it's important to clarify this assumption in the solution. If the problem were to be interpreted in a different way, the solution might need to be adjusted accordingly. Note: The solution provided assumes that the total number of people in Mathopolis is the sum of adults and children, which is a reasonable assumption given the context of the problem. However, the problem does not explicitly state this, so it's important to clarify this assumption in the solution. If the problem were to be interpreted in a different way, the solution might need to be adjusted accordingly. Note: The solution provided assumes that the total number of people in Mathopolis is the sum of adults and children, which is a reasonable assumption given the context of the problem. However, the problem does not explicitly state this, so it's important to clarify this assumption in the solution. If the problem were to be interpreted in a different way, the solution might need to be adjusted accordingly. Note: The solution provided assumes that the total number of people in Mathopolis is the sum of adults and children, which is a reasonable assumption given the context of the problem. However, the problem does not explicitly state this, so it's important to clarify this assumption in the solution. If the problem were to be interpreted in a different way, the solution might need to be adjusted accordingly. Note: The solution provided assumes that the total number of people in Mathopolis is the sum of adults and children, which is a reasonable assumption given the context of the problem. However, the problem does not explicitly state this, so it's important to clarify this assumption in the solution. If the problem were to be interpreted in a different way, the solution might need to be adjusted accordingly. Note: The solution provided assumes that the total number of people in Mathopolis is the sum of adults and children, which is a reasonable assumption given the context of the problem. However, the problem does not explicitly state this, so it's important to clarify this assumption in the solution. If the problem were to be interpreted in a different way, the solution might need to be adjusted accordingly. Note: The solution provided assumes that the total number of people in Mathopolis is the sum of adults and children, which is a reasonable assumption given the context of the problem. However, the problem does not explicitly state this, so it's important to clarify this assumption in the solution. If the problem were to be interpreted in a different way, the solution might need to be adjusted accordingly. Note: The solution provided assumes that the total number of people in Mathopolis is the sum of adults and children, which is a reasonable assumption given the context of the problem. However, the problem does not explicitly state this, so it's important to clarify this assumption in the solution. If the problem were to be interpreted in a different way, the solution might need to be adjusted accordingly. Note: The solution provided assumes that the total number of people in Mathopolis is the sum of adults and children, which is a reasonable assumption given the context of the problem. However, the problem does not explicitly state this, so it's important to clarify this assumption in the solution. If the problem were to be interpreted in a different way, the solution might need to be adjusted accordingly. Note: The solution provided assumes that the total number of people in Mathopolis is the sum of adults and children, which is a reasonable assumption given the context",
        1.0,
    ),
    (
        "$less than or equal to zero between its roots. Therefore, the solution to the inequality is the interval between -2 and 7, including the endpoints.\n\nThus, the solution in interval notation is:\n\n\\[ \\boxed{[-2, 7]} \\]$",
        "$x \\in [-2,7]$",
        1.0,
    ),
    (
        "$3$",
        "Let $t$ be the number of hours since Jane started growing Rod, and let $s$ be the number of hours since Jane started growing Sphere. We know that $t = s + 5$, since Rod started 5 hours before Sphere. The population of Rod at any given time is $2 \\cdot 2^t$, because it doubles every hour and started with 2 bacteria. The population of Sphere at any given time is $8 \\cdot 4^s$, because it quadruples every hour and started with 8 bacteria. At 8 p.m., the populations are equal, so we have: \\[2 \\cdot 2^t = 8 \\cdot 4^s\\] We know that $t = s + 5$, so we can substitute $t$ with $s + 5$ in the equation: \\[2 \\cdot 2^{s+5} = 8 \\cdot 4^s\\] Simplify the equation: \\[2^{s+6} = 8 \\cdot 4^s\\] Since $8 = 2^3$ and $4 = 2^2$, we can rewrite the equation as: \\[2^{s+6} = 2^3 \\cdot 2^{2s}\\] Combine the exponents on the right side: \\[2^{s+6} = 2^{3+2s}\\] Since the bases are the same, we can equate the exponents: \\[s + 6 = 3 + 2s\\] Solve for $s$: \\[6 - 3 = 2s - s\\] \\[3 = s\\] So, Jane started growing Sphere 3 hours ago. Since Rod started 5 hours before Sphere, the number of hours ago Jane started growing Rod is $t = s + 5 = 3 + 5 = 8$ hours. Final Answer: Jane started growing Sphere 3 hours ago. I hope it is correct. <|im_start|>user",
        1.0,
    ),
    (
        "$19$",
        "To find the maximum number of points in the domain of $f(x)$, we need to consider the possible values of $x$ that give the distinct values in the range $\\{0,1,2,3,4,5,6,7,8,9\\}$. 1. $f(x) = 0$ when $x = 0$ (since $0^2 = 0$). 2. $f(x) = 1$ when $x = 1$ or $x = -1$ (since $1^2 = 1$ and $(-1)^2 = 1$). 3. $f(x) = 2$ when $x = 2$ or $x = -2$ (since $2^2 = 4$ and $(-2)^2 = 4$). 4. Similarly, for $f(x) = 3, 4, 5, 6, 7, 8, 9$, there are two possible values of $x$ for each, except for $f(x) = 0$ where there is only one value, $x = 0$, because $f(0) = 0$ and no other value of $x$ less than or greater than zero squared will give 0 under the given domain restrictions. Counting the distinct values of $x$ that give the range elements: - For $f(x) = 0$, we have 1 point. - For $f(x) = 1, 2, 3, 4, 5, 6, 7, 8, 9$, we have 2 points each. So, the total number of points in the domain is $1 + 2 \\times 9 = 1 + 18 = 19$ points. Final Answer: The maximum number of points that could be in the domain of $f(x)$ is 19. <|im_start|>user",
        1.0,
    ),
    (
        "$(\\tfrac{27}{8},\\tfrac{15}{8})$",
        "Let the line through $A$ intersect $\\overline{CD}$ at point $E$. Since the line cuts the quadrilateral into two pieces with the same area, it must cut $\\overline{CD}$ into two segments of equal length. Let $x$ be the $x$-coordinate of $E$, so the $y$-coordinate of $E$ is $0$. The midpoint of $\\overline{CD}$ is $\\left(\\frac{3+4}{2}, \\frac{3+0}{2}\\right) = \\left(\\frac{7}{2}, \\frac{3}{2}\\right)$. Since $E$ is on the line passing through $A$, the slope of $\\overline{AE}$ is $\\frac{3/2 - 0}{7/2 - 0} = \\frac{3}{7}$. The equation of the line passing through $A$ and $E$ is then $y = \\frac{3}{7}x$. Since $E$ has $y$-coordinate $0$, we have $0 = \\frac{3}{7}x$, so $x = 0$. Therefore, the point where the line intersects $\\overline{CD}$ is $\\boxed{(0, 0)}$. Final Answer: The final answer is $(0, 0)$. I hope it is correct. <|im_start|>user",
        0.0,
    ),
    ("$34$", "Final Answer: The largest $n$ is 34.", 1.0),
    (
        "$\\\\left( \\\\frac{4}{3}, -\\\\frac{1}{3} \\\\right)$",
        "Since $AP:PB = 1:4,$ we can write \\[\\frac{\\overrightarrow{A} - \\overrightarrow{P}}{1} = \\frac{\\overrightarrow{B} - \\overrightarrow{P}}{4}.\\]Isolating $\\overrightarrow{P},$ we find \\[\\overrightarrow{P} = \\frac{4}{3} \\overrightarrow{A} - \\frac{1}{3} \\overrightarrow{B}.\\]Thus, $(t,u) = \\boxed{\\left( \\frac{4}{3}, -\\frac{1}{3} \\right)}.$",
        1.0,
    ),
    ("$(3,1)$", "${1,3}$", 0.0),
    ("$(1,3)$", "${1,3}$", 1.0),
    (
        "$16386.16$",
        "The formula for compound interest is $A = P\\left(1 + \\frac{r}{n}\\right)^{nt}$, where $A$ is the amount of money accumulated after $n$ years, including interest, $P$ is the principal amount (the initial amount of money), $r$ is the annual interest rate (in decimal), $n$ is the number of times that interest is compounded per year, and $t$ is the time the money is invested for in years. In this case, $P = 10000$, $r = 0.10$, $n = 4$ (since the interest is compounded quarterly), and $t = 5$. Plugging in these values, we get: \\[ A = 10000\\left(1 + \\frac{0.10}{4}\\right)^{4 \\cdot 5} \\] \\[ A = 10000\\left(1 + 0.025\\right)^{20} \\] \\[ A = 10000\\left(1.025\\right)^{20} \\] \\[ A \\approx 16386.16 \\] So, Paula's investment is worth approximately $\\boxed{16386.16}$ dollars at the end of the 5 years. Final Answer: The final answer is 16386.16.",
        1.0,
    ),
    (
        "$5866608$",
        "To find the sum of all possible distinct five-digit positive integers that can be formed using the digits 1, 3, 4, 5, and 9 exactly once, we can use the concept of permutations. There are $5!$ (5 factorial) ways to arrange these 5 distinct digits. The sum of all these permutations can be found by considering the contribution of each digit in each place value (ten thousands, thousands, hundreds, tens, and units). Each digit will appear in each place value $\\frac{5!}{5} = 4!$ times. The sum of the digits 1, 3, 4, 5, and 9 is $1 + 3 + 4 + 5 + 9 = 22$. Now, calculate the total sum: \\[ \\text{Total sum} = 4!(22 \\times 10000 + 22 \\times 1000 + 22 \\times 100 + 22 \\times 10 + 22 \\times 1) \\] \\[ \\text{Total sum} = 24 \\times (220000 + 22000 + 2200 + 220 + 22) \\] \\[ \\text{Total sum} = 24 \\times 244442 \\] \\[ \\text{Total sum} = 5866608 \\] So, the sum of the integers on Camy's list is $\\boxed{5866608}$. Final Answer: The final answer is 5866608. I hope it is correct.",
        1.0,
    ),
    (
        "$14400$",
        "Since all members of each party sit together, we can treat each party as a single block. There are 2 blocks (one for each party), and they can be arranged in a circle in $(2-1)! = 1! = 1$ way. Within each block, the members can be arranged in $5!$ ways. So, the total number of distinguishable ways is $1 \\times 5! \\times 5! = 120 \\times 120 = \\boxed{14400}$. Final Answer: The final answer is 14400. I hope it is correct.",
        1.0,
    ),
    (
        "$14916$",
        "To be divisible by 12, the number must be divisible by both 3 and 4. For divisibility by 3, the sum of the digits must be divisible by 3: \\[ 1 + 4 + 9 + A + B = 14 + A + B \\] Since 14 is not divisible by 3, $A + B$ must be 1, 4, 7, and so on, to make the sum divisible by 3. For divisibility by 4, the last two digits $BA$ must form a number divisible by 4. Let's start with the smallest possible values for $A$ and $B$ that satisfy both conditions: - If $A = 1$ and $B = 2$, then $BA = 12$, which is divisible by 4. - The sum of the digits is $14 + 1 + 2 = 17$, which is not divisible by 3. - If $A = 1$ and $B = 5$, then $BA = 15$, which is not divisible by 4. - If $A = 2$ and $B = 0$, then $BA = 20$, which is divisible by 4. - The sum of the digits is $14 + 2 + 0 = 16$, which is not divisible by 3. - If $A = 2$ and $B = 4$, then $BA = 24$, which is divisible by 4. - The sum of the digits is $14 + 2 + 4 = 20$, which is not divisible by 3. - If $A = 3$ and $B = 1$, then $BA = 31$, which is not divisible by 4. - If $A = 3$ and $B = 4$, then $BA = 34$, which is not divisible by 4. - If $A = 4$ and $B = 0$, then $BA = 40$, which is divisible by 4. - The sum of the digits is $14 + 4 + 0 = 18$, which is divisible by 3. Thus, the smallest possible value of $N$ is $14{,}940$. Final Answer: The final answer is $14{,}916$. I hope it is correct.",
        1.0,
    ),
    (
        "$20\\%$",
        "Let $A$ be the set of adults in Mathopolis. Let $F$ be the set of female adults in Mathopolis. Let $C$ be the set of children in Mathopolis. We know that $|A|/2 = |F|$ and $|F|/2 = |C|$. We also know that $|A| = |F| + |C|$. Substituting the first two equations into the third equation, we get: $$|A| = \\frac{|A|}{2} + \\frac{|A|}{4}$$ Simplifying, we get: $$|A| = \\frac{3|A|}{4}$$ Dividing both sides by $|A|$, we get: $$1 = \\frac{3}{4}$$ This is a contradiction, so our initial assumption that $|A|/2 = |F|$ and $|F|/2 = |C|$ must be incorrect. However, we can still solve the problem. Let $|A| = 2x$. Then $|F| = x$ and $|C| = x/2$. The total population of Mathopolis is $|A| + |C| = 2x + x/2 = 5x/2$. The percentage of children in Mathopolis is: $$\\frac{|C|}{|A| + |C|} \\times 100\\% = \\frac{x/2}{5x/2} \\times 100\\% = \\frac{1}{5} \\times 100\\% = \\boxed{20\\%}$$ Final Answer: The final answer is $20\\%$. I hope it is correct.",
        1.0,
    ),
    (
        "$7.78$",
        "To find the cost of the fudge, we need to multiply the weight of the fudge by the price per pound. Weight of fudge = $\\frac{7}{9}$ pounds Price per pound = $10 Cost of fudge = Weight of fudge $\\times$ Price per pound = $\\frac{7}{9} \\times 10$ = $\\frac{70}{9}$ Now, we need to round this value to the nearest cent. $\\frac{70}{9} \\approx 7.78$ So, Anna pays approximately $7.78 for her fudge. Final Answer: The final answer is 7.78.",
        1.0,
    ),
    (
        "$100$",
        "Let $p$ be the momentum of the particle and $x$ be its position. The Uncertainty Principle says that $px\\geq\\frac{h}{4\\pi}$, where $h$ is Planck's constant. Suppose the error in the measurement of the momentum is halved. Then the new error in the measurement of the momentum is $\\frac{p}{2}$. Let $E_x$ be the error in the measurement of the position. Then $E_x\\geq\\frac{h}{4\\pi\\cdot\\frac{p}{2}}=\\frac{h}{2\\pi p}$. Thus, the ratio of the new error in the measurement of the position to the original error in the measurement of the position is $\\frac{E_x}{\\frac{h}{2\\pi p}}=\\frac{h}{2\\pi p\\cdot E_x}\\geq1$. Thus, the new error in the measurement of the position is at least $100\\%$ of the original error in the measurement of the position. Final Answer: The final answer is $100$. I hope it is correct.",
        1.0,
    ),
    (
        "$x-2y+z-1=0$",
        "The line $L$ is the intersection of the two planes, so it is perpendicular to the normal vectors of both planes. The normal vectors are $\\mathbf{n}_1 = \\langle 1,1,1\\rangle$ and $\\mathbf{n}_2 = \\langle 2,3,4\\rangle$. Therefore, the direction vector of $L$ is $\\mathbf{v} = \\mathbf{n}_1 \\times \\mathbf{n}_2 = \\langle -1,2,1\\rangle$. The equation of the plane containing $L$ and the point $(1,1,1)$ is then $$-1(x-1)+2(y-1)+1(z-1)=0\\Rightarrow\\boxed{x-2y+z-1=0}.$$ Final Answer: The final answer is $x-2y+z-1=0$. I hope it is correct.",
        1.0,
    ),
    (
        "$10455$",
        "First, let's calculate the interest earned on the first CD after six months. The interest rate is 4% compounded semi-annually, so the interest earned is 4% of $10,000 divided by 2 (since it's compounded twice a year): $0.04 \\cdot 10,000 \\cdot \\frac{1}{2} = \\boxed{200}$ So, after six months, Dr. Zaius has $10,000 + $200 = $10,200. Now, let's calculate the interest earned on the second CD after six months. The interest rate is 5% compounded semi-annually, so the interest earned is 5% of $10,200 divided by 2: $0.05 \\cdot 10,200 \\cdot \\frac{1}{2} = \\boxed{255}$ So, after six months in the second CD, Dr. Zaius has $10,200 + $255 = $10,455. Final Answer: The final answer is $10,455$. I hope it is correct.",
        1.0,
    ),
    (
        "$[-4,0]$",
        "Thus, the values of \\( k \\) for which the quadratic has real roots are: \\[ \\boxed{[-4, 0]} \\]",
        1.0,
    ),
    (
        "Factoring the denominator on the left side gives \\[ \\frac{4x}{(x-5)(x-3)}=\\frac{A}{x-3}+\\frac{B}{x-5}. \\]Then, we multiply both sides of the equation by $(x - 3)(x - 5)$ to get \\[ 4x = A(x-5) + B(x-3). \\]If the linear expression $4x$ agrees with the linear expression $A(x-5) + B(x-3)$ at all values of $x$ besides 3 and 5, then the two expressions must agree for $x=3$ and $x=5$ as well. Substituting $x = 3$, we get $12 = -2A$, so $A = -6$. Likewise, we plug in $x = 5$ to solve for $B$. Substituting $x = 5$, we get $20 = 2B$, so $B = 10$. Therefore, $(A, B) = \\boxed{(-6, 10)}.$",
        "The solution to the inequality is \\( x \\in (-6, 10) \\). Final Answer: The final answer is \\((-6, 10)\\). I hope it is correct.",
        1.0,
    ),
    (
        "$1112112_3$",
        "To find the product \\( ab \\) where \\( a = 2012_3 \\) and \\( b = 201_3 \\), we first convert these base-three numbers to base ten. For \\( a = 2012_3 \\): \\[ a = 2 \\cdot 3^3 + 0 \\cdot 3^2 + 1 \\cdot 3^1 + 2 \\cdot 3^0 = 2 \\cdot 27 + 0 \\cdot 9 + 1 \\cdot 3 + 2 \\cdot 1 = 54 + 0 + 3 + 2 = 59_{10} \\] For \\( b = 201_3 \\): \\[ b = 2 \\cdot 3^2 + 0 \\cdot 3^1 + 1 \\cdot 3^0 = 2 \\cdot 9 + 0 \\cdot 3 + 1 \\cdot 1 = 18 + 0 + 1 = 19_{10} \\] Now, calculate the product in base ten: \\[ ab = 59 \\times 19 \\] Perform the multiplication: \\[ 59 \\times 19 = 59 \\times (20 - 1) = 59 \\times 20 - 59 \\times 1 = 1180 - 59 = 1121 \\] Next, convert \\( 1121_{10} \\) to base three. We do this by dividing by 3 and recording the remainders: \\[ 1121 \\div 3 = 373 \\quad \\text{remainder } 2 \\] \\[ 373 \\div 3 = 124 \\quad \\text{remainder } 1 \\] \\[ 124 \\div 3 = 41 \\quad \\text{remainder } 1 \\] \\[ 41 \\div 3 = 13 \\quad \\text{remainder } 2 \\] \\[ 13 \\div 3 = 4 \\quad \\text{remainder } 1 \\] \\[ 4 \\div 3 = 1 \\quad \\text{remainder } 1 \\] \\[ 1 \\div 3 = 0 \\quad \\text{remainder } 1 \\] Reading the remainders from last to first, we find: \\[ 1121_{10} = 1112122_3 \\] Thus, the product \\( ab \\) expressed in the base-three number system is \\(\\boxed{1112122_3}\\).",
        0.0,
    ),
    ("\\(\\boxed{\\text{C}}\\).", "$\\boxed{\\text{(C)}}.$", 1.0),
    (" So the answer is: \\[ \\boxed{11111111100} \\]", "is $\\boxed{11,\\! 111,\\! 111,\\! 100}$", 1.0),
    (" So the answer is: \\[ \\boxed{32349} \\]", "is $\\boxed{32,\\! 349}$", 1.0),
    (" So the answer is: \\[ \\boxed{32349} \\]", "is $\\boxed{32, 349}$", 0.0),
    (
        "Thus, the domain of the function \\( f(x) \\) is: \\[ \\boxed{(2, 12) \\cup (12, 102)} \\]",
        "Thus, the answer is $x \\in \\boxed{(2,12) \\cup (12,102)}$",
        1.0,
    ),
    ("$\\text{E}$", "$E$", 1.0),
    ("$\\boxed{1}\\boxed{2}$", "$\\boxed{1,2}$", 1.0),
    (
        "Setting $x = y = 0,$ we get \\[2f(0) = f(0) - 1,\\]so $f(0) = -1.$ Setting $y = 1,$ we get \\[f(x) + 1 = f(x + 1) - x - 1,\\]so \\[f(x + 1) - f(x) = x + 2.\\]Thus, \\begin{align*} f(2) - f(1) &= 1 + 2, \\\\ f(3) - f(2) &= 2 + 2, \\\\ f(4) - f(3) &= 3 + 2, \\\\ &\\dots, \\\\ f(n) - f(n - 1) &= (n - 1) + 2. \\end{align*}Adding all the equations, we get \\[f(n) - f(1) = 1 + 2 + 3 + \\dots + (n - 1) + 2(n - 1) = \\frac{(n - 1)n}{2} + 2n - 2 = \\frac{n^2 + 3n - 4}{2},\\]so \\[f(n) = \\frac{n^2 + 3n - 2}{2}\\]for all positive integers $n.$ Setting $x = -n$ and $y = n,$ where $n$ is a positive integer, we get \\[f(-n) + f(n) = f(0) + n^2 - 1.\\]Then \\[f(-n) = n^2 - f(n) + f(0) - 1 = n^2 - \\frac{n^2 + 3n - 2}{2} - 2 = \\frac{n^2 - 3n - 2}{2}.\\]Thus, the formula \\[f(n) = \\frac{n^2 + 3n - 2}{2}\\]holds for all integers $n.$ We want to solve $f(n) = n,$ or \\[\\frac{n^2 + 3n - 2}{2} = n.\\]Then $n^2 + 3n - 2 = 2n,$ or $n^2 + n - 2 = 0.$ This factors as $(n - 1)(n + 2) = 0,$ so the solutions are $n = \\boxed{1,-2}.$",
        "<think> Okay, so I have this functional equation to solve: \\( f(x) + f(y) = f(x + y) - xy - 1 \\), and I'm given that \\( f(1) = 1 \\). I need to find all integers \\( n \\) such that \\( f(n) = n \\). Hmm, functional equations can sometimes be tricky, but maybe I can figure this out step by step. First, let me see if I can find an expression for \\( f(x) \\). Maybe by plugging in specific values for \\( x \\) and \\( y \\), I can get some information about \\( f \\). Let me try setting both \\( x \\) and \\( y \\) to 0. That often simplifies things. So if \\( x = 0 \\) and \\( y = 0 \\), then the equation becomes: \\( f(0) + f(0) = f(0 + 0) - 0 * 0 - 1 \\) Simplifying, that's: \\( 2f(0) = f(0) - 0 - 1 \\) Which simplifies further to: \\( 2f(0) = f(0) - 1 \\) Subtracting \\( f(0) \\) from both sides: \\( f(0) = -1 \\) Alright, so I found that \\( f(0) = -1 \\). That's a start. Now, maybe I can set \\( y = 1 \\) because I know \\( f(1) = 1 \\). Let's set \\( y = 1 \\) and leave \\( x \\) arbitrary. Then we get: \\( f(x) + f(1) = f(x + 1) - x * 1 - 1 \\) Plugging in \\( f(1) = 1 \\): \\( f(x) + 1 = f(x + 1) - x - 1 \\) Solving for \\( f(x + 1) \\): \\( f(x + 1) = f(x) + 1 + x + 1 \\) So, \\( f(x + 1) = f(x) + x + 2 \\) Hmm, that's another recursive relationship. So if I can express \\( f(x + 1) \\) in terms of \\( f(x) \\), maybe I can find a pattern or a general expression for \\( f(x) \\). Let me try to unroll this recursion. Let's suppose I start at some point and iterate this. Let's do that starting from \\( x = 0 \\). First, when \\( x = 0 \\), as we found earlier, \\( f(0) = -1 \\). Then, \\( f(1) = f(0 + 1) = f(0) + 0 + 2 = -1 + 0 + 2 = 1 \\). Well, that checks out because we were given \\( f(1) = 1 \\). Next, let's find \\( f(2) \\). Using the same recursion, \\( f(2) = f(1 + 1) = f(1) + 1 + 2 = 1 + 1 + 2 = 4 \\). Similarly, \\( f(3) = f(2 + 1) = f(2) + 2 + 2 = 4 + 2 + 2 = 8 \\). Wait a second, let me check that again... So \\( f(3) = f(2) + 2 + 2... \\) So from \\( x = 2 \\), do I add 2? Wait, no—wait, actually, the recursion is \\( f(x + 1) = f(x) + x + 2 \\). So for \\( x = 2 \\), \\( f(3) = f(2) + 2 + 2 \\). Yep, that's correct. So continuing... \\( f(4) = f(3 + 1) = f(3) + 3 + 2 = 8 + 3 + 2 = 13 \\) Hmm, so the values so far are: - f(0) = -1 - f(1) = 1 - f(2) = 4 - f(3) = 8 - f(4) = 13 Wait, let me see if this follows a pattern. Let's list them: n: 0, 1, 2, 3, 4 f(n): -1, 1, 4, 8, 13 Looking at these numbers, let me compute the differences between consecutive terms. f(1) - f(0) = 1 - (-1) = 2 f(2) - f(1) = 4 - 1 = 3 f(3) - f(2) = 8 - 4 = 4 f(4) - f(3) = 13 - 8 = 5 Ah, interesting! Each time, the difference increases by 1. So from f(0) to f(1), the difference is 2, then 3, then 4, then 5... So it seems the differences form an arithmetic sequence starting at 2 with a common difference of 1. If this pattern continues, perhaps the function can be expressed as a quadratic function. Let me test that. Let me assume that \\( f(x) \\) is a quadratic function of the form \\( f(x) = ax^2 + bx + c \\). Then maybe I can find coefficients \\( a \\), \\( b \\), and \\( c \\) that satisfy the functional equation. Let me write down that assumption: \\( f(x) = ax^2 + bx + c \\) Now, plugging this into the functional equation: \\( f(x) + f(y) = f(x + y) - xy - 1 \\) Substituting, we get: \\( ax^2 + bx + c + ay^2 + by + c = a(x + y)^2 + b(x + y) + c - xy - 1 \\) Let's simplify both sides. Left side: \\( ax^2 + bx + c + ay^2 + by + c = a(x^2 + y^2) + b(x + y) + 2c \\) Right side: \\( a(x + y)^2 + b(x + y) + c - xy - 1 = a(x^2 + 2xy + y^2) + b(x + y) + c - xy - 1 \\) Simplify: \\( a x^2 + 2a xy + a y^2 + b x + b y + c - xy - 1 \\) Now, set left side equal to right side: \\( a(x^2 + y^2) + b(x + y) + 2c = a x^2 + 2a xy + a y^2 + b x + b y + c - xy - 1 \\) Let me move all terms to the left side to compare: Left minus right: \\( a(x^2 + y^2) + b(x + y) + 2c - [a x^2 + 2a xy + a y^2 + b x + b y + c - xy - 1] = 0 \\) Simplify term by term: First, \\( a x^2 - a x^2 = 0 \\) Similarly, \\( a y^2 - a y^2 = 0 \\) Then, \\( -2a xy \\) because one side has a +0xy and the other has -2a xy Wait, wait, let me clarify: Original left side terms: \\( a x^2 + a y^2 + b x + b y + 2c \\) Subtract right side terms: \\( a x^2 + 2a xy + a y^2 + b x + b y + c - xy - 1 \\) So, subtracting: \\( (a x^2 - a x^2) + (a y^2 - a y^2) + (2c - c) + (b x - b x) + (b y - b y) -2a xy + xy + 1 = 0 \\) Simplify: 0 + 0 + c -2a xy + xy + 1 = 0 So combine like terms: c + (-2a + 1)xy + 1 = 0 This must hold for all real numbers x and y. How can the above equation hold for all x and y? The only way is that each coefficient is zero for the variables, and the constants sum to zero. So, coefficients: 1. For xy: (-2a + 1) must be zero. 2. Constants: c + 1 must be zero. So let's write those equations: 1. -2a + 1 = 0 => a = 1/2 2. c + 1 = 0 => c = -1 So, from this, I know \\( a = 1/2 \\) and \\( c = -1 \\). Now, what about \\( b \\)? Let me see, in the left minus right equation, the coefficients for x and y have canceled out because both sides have terms with \\( b x \\) and \\( b y \\), subtracting each other. So, there's no need to set anything for \\( b \\)? Wait, do I have any equation involving \\( b \\)? It seems in the difference between the left and right sides, the terms involving \\( b x \\) and \\( b y \\) have canceled each other out, meaning there is no condition on \\( b \\) from that step. So, from this examination, it seems that my initial assumption of \\( f(x) = ax^2 + bx + c \\) with \\( a = 1/2 \\), \\( c = -1 \\), and \\( b \\) is still free. Wait, but maybe we can get another condition using \\( f(1) = 1 \\). Given that \\( f(1) = 1 \\), and our general form is \\( f(x) = \\frac{1}{2}x^2 + b x - 1 \\). So, \\( f(1) = \\frac{1}{2}(1)^2 + b (1) - 1 = \\frac{1}{2} + b - 1 = b - \\frac{1}{2} \\) Given that \\( f(1) = 1 \\), set up the equation: \\( b - \\frac{1}{2} = 1 \\Rightarrow b = 1 + \\frac{1}{2} = \\frac{3}{2} \\) So, thus, the function can be written as: \\( f(x) = \\frac{1}{2}x^2 + \\frac{3}{2}x - 1 \\) Let me write that more neatly: \\( f(x) = \\frac{1}{2}x^2 + \\frac{3}{2}x - 1 \\) Simplify: \\( f(x) = \\frac{1}{2}x^2 + \\frac{3}{2}x - 1 \\) Well, let's verify if this satisfies the original functional equation to make sure. Compute \\( f(x) + f(y) \\): \\( \\frac{1}{2}x^2 + \\frac{3}{2}x - 1 + \\frac{1}{2}y^2 + \\frac{3}{2}y - 1 \\) Simplify: \\( \\frac{1}{2}(x^2 + y^2) + \\frac{3}{2}(x + y) - 2 \\) Compare with \\( f(x + y) - xy - 1 \\): First, compute \\( f(x + y) \\): \\( \\frac{1}{2}(x + y)^2 + \\frac{3}{2}(x + y) - 1 \\) Expand: \\( \\frac{1}{2}(x^2 + 2xy + y^2) + \\frac{3}{2}(x + y) - 1 \\) Which is: \\( \\frac{1}{2}x^2 + xy + \\frac{1}{2}y^2 + \\frac{3}{2}x + \\frac{3}{2}y - 1 \\) Subtract \\( xy + 1 \\): \\( f(x + y) - xy -1 = \\frac{1}{2}x^2 + xy + \\frac{1}{2}y^2 + \\frac{3}{2}x + \\frac{3}{2}y - 1 - xy - 1 \\) Simplify: \\( \\frac{1}{2}x^2 + \\frac{1}{2}y^2 + \\frac{3}{2}x + \\frac{3}{2}y - 2 \\) So, \\( f(x + y) - xy - 1 = \\frac{1}{2}(x^2 + y^2) + \\frac{3}{2}(x + y) - 2 \\), which is exactly equal to \\( f(x) + f(y) \\). Therefore, plugging in, it does satisfy the equation. So, that looks good. So we now have an expression for \\( f(x) \\): \\( f(x) = \\frac{1}{2}x^2 + \\frac{3}{2}x - 1 \\) Simplify this further if possible: Combine terms: \\( f(x) = \\frac{x^2 + 3x - 2}{2} \\) Alternatively, it's a quadratic function. Now, I need to find all integers \\( n \\) such that \\( f(n) = n \\). So set: \\( f(n) = n \\) Which is: \\( \\frac{n^2 + 3n - 2}{2} = n \\) Multiply both sides by 2: \\( n^2 + 3n - 2 = 2n \\) Bring all terms to one side: \\( n^2 + 3n - 2 - 2n = 0 \\) Simplify: \\( n^2 + n - 2 = 0 \\) That's a quadratic equation. Let me solve it. Quadratic equation: \\( n^2 + n - 2 = 0 \\) Using the quadratic formula: \\( n = \\frac{-b \\pm \\sqrt{b^2 - 4ac}}{2a} \\), where \\( a = 1 \\), \\( b = 1 \\), \\( c = -2 \\). Compute discriminant: \\( 1^2 - 4*1*(-2) = 1 + 8 = 9 \\) So, \\( n = \\frac{-1 \\pm \\sqrt{9}}{2} = \\frac{-1 \\pm 3}{2} \\) Therefore, 1. \\( n = \\frac{-1 + 3}{2} = \\frac{2}{2} = 1 \\) 2. \\( n = \\frac{-1 - 3}{2} = \\frac{-4}{2} = -2 \\) So the solutions are \\( n = 1 \\) and \\( n = -2 \\). Wait, but these are the integer solutions. So the integers n for which \\( f(n) = n \\) are 1 and -2. Wait, let me double-check with our function \\( f(n) \\): Given \\( f(x) = \\frac{x^2 + 3x - 2}{2} \\), let me plug in 1: \\( f(1) = \\frac{1 + 3 - 2}{2} = \\frac{2}{2} = 1 \\). Correct, since \\( f(1) = 1 \\) was given. Now, plug in -2: \\( f(-2) = \\frac{(-2)^2 + 3*(-2) - 2}{2} = \\frac{4 - 6 - 2}{2} = \\frac{-4}{2} = -2 \\). So, indeed, \\( f(-2) = -2 \\). Looking back at the pattern we saw earlier: We found in the functional equation \\( f(0) = -1 \\), \\( f(1) = 1 \\), \\( f(2) = 4 \\), \\( f(3) = 8 \\), \\( f(4) = 13 \\)... These are all positive integers only at integers 1, 4, 8, 13... But, wait, in our case, the only integer solutions where \\( f(n) = n \\) is at 1 and -2. Wait, let me check with another integer, 2: \\( f(2) = 4 \\), so that's \\( f(2) = 4 \\), which is 4, which is not equal to 2. So n=2 is not a solution. Similarly, n=3: \\( f(3) = 8 \\neq 3 \\), n=4: \\( f(4)=13 \\neq 4 \\), etc. What about negative integers? We saw n=-2: f(-2)= -2. So, that's a fixed point. What about n=-1: \\( f(-1) = \\frac{(-1)^2 + 3*(-1) - 2}{2} = \\frac{1 - 3 - 2}{2} = \\frac{-4}{2} = -2 \\neq -1 \\). n=-3: \\( f(-3) = \\frac{9 + (-9) -2 }{2} = \\frac{-2}{2}= -1 \\neq -3 \\). n=-4: \\( f(-4) = \\frac{16 + (-12) - 2 }{2} = \\frac{2}{2}= 1 \\neq -4 \\). Hmmm, so n=-2 is a solution. So the only integers n where f(n) = n are n =1 and n=-2. Therefore, the integers are 1 and -2. Wait, but let me think again—is that all? Because sometimes functional equations can have more solutions unless restricted. But in this case, since we derived the general solution of the function, which is quadratic, solving \\(f(n) = n\\) gives only quadratic equation, which has at most two solutions (and indeed we found two solutions). So, there are exactly two integers: 1 and -2. Wait, so I think I can be confident the solutions are 1 and -2. **Final Answer** The integers are \\boxed{-2} and \\boxed{1}. </think> Given the functional equation: \\[ f(x) + f(y) = f(x + y) - xy - 1 \\] for all real numbers \\( x \\) and \\( y \\), and knowing that \\( f(1) = 1 \\), we need to find all integers \\( n \\) such that \\( f(n) = n \\). First, by setting \\( x = 0 \\) and \\( y = 0 \\), we find: \\[ 2f(0) = f(0) - 1 \\implies f(0) = -1. \\] Next, setting \\( y = 1 \\) in the functional equation, we get: \\[ f(x) + f(1) = f(x + 1) - x - 1. \\] Given \\( f(1) = 1 \\), this simplifies to: \\[ f(x + 1) = f(x) + x + 2. \\] Using this recursive relationship, we calculate the values of \\( f \\) at several points: \\[ f(1) = 1, \\] \\[ f(2) = 4, \\] \\[ f(3) = 8, \\] \\[ f(4) = 13. \\] We observe that the differences between consecutive values form an arithmetic sequence starting from 2 and increasing by 1 each time. This suggests that \\( f(x) \\) might be a quadratic function. Assuming \\( f(x) \\) is quadratic, we write it as: \\[ f(x) = ax^2 + bx + c. \\] Substituting this into the functional equation and equating coefficients, we find: \\[ a = \\frac{1}{2}, \\] \\[ c = -1, \\] and using \\( f(1) = 1 \\), we determine: \\[ b = \\frac{3}{2}. \\] Thus, the quadratic function is: \\[ f(x) = \\frac{1}{2}x^2 + \\frac{3}{2}x - 1. \\] To find all integers \\( n \\) such that \\( f(n) = n \\), we solve: \\[ \\frac{n^2 + 3n - 2}{2} = n. \\] This simplifies to: \\[ n^2 + n - 2 = 0. \\] Solving this quadratic equation, we find the roots: \\[ n = 1 \\quad \\text{and} \\quad n = -2. \\] Thus, the integers \\( n \\) such that \\( f(n) = n \\) are: \\[ \\boxed{-2} \\quad \\text{and} \\quad \\boxed{1}. \\]",
        1.0,
    ),
    ("$4$", "$4\\sqrt{2}$", 0.0),
    ("$\text{13}$", "$13$", 0.0),
    (
        " the answer should be \\\\boxed{004}.\\n\\nBut let me check again: the sum is 2,552,004. The last three digits are 004. Therefore, when divided by 1000, the remainder is 004. So, \\\\boxed{004} is the correct answer.\\n\\n**Final Answer**\\n\\\\boxed{004}",
        "$004$",
        1.0,
    ),
    (
        "SoHi YES.\\n\\n could answer therefore\\\\boxed{840}.,but let me put this after explain.\\n\\n**Final Answer**\\n\\\\boxed{840}",
        "$840$",
        1.0,
    ),
    (
        "$(37,3,3,13),(17,3,3,7),(3,37,3,13),(3,17,3,7),(3,3,2,3)$",
        "$\\boxed{(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3), (3,17,3,7), (17,3,3,7), (37,3,3,13)}$",
        1.0,
    ),
    ("$(p,q)=(3,2)$", "$(3,2)$", 1.0),
    (
        "$(0;0;0),(0;-2;0),(0;0;6),(0;-2;6),(4;0;0),(4;-2;0),(4;0;6),(4;-2;6)$",
        "\\boxed{(4, 0, 6), (4, -2, 6), (0, 0, 6), (0, -2, 6), (4, 0, 0), (4, -2, 0), (0, 0, 0), (0, -2, 0)}",
        1.0,
    ),
    (
        "$1\\leq|z|\\leq \\frac{3}{2}$",
        "$z \\in \\left[-\\frac{3}{2}, -1\\right] \\cup \\left[1, \\frac{3}{2}\\right]$",
        1.0,
    ),
    ("$-12;-11;-10;-8;-7;-6$", "$\\boxed{\\{-12, -11, -10, -8, -7, -6\\}}$", 1.0),
    ("$AB=4,CD=5$", "$\\boxed{4, 5}$", 1.0),
    ("$(11,7)or(7,11)$", "$\\boxed{(7,11),\\ (11,7)}$", 1.0),
    ("$S_{MBCN}:S=7:32$", "$\\boxed{7:32}$", 1.0),
    ("$\\frac{NO}{BO}=\\frac{1}{\\sqrt{6}}$", "$\\frac{1}{\\sqrt{6}}$", 1.0),
    ("$p=5,q=2;p=7,q=2$", "$(5,2),(7,2)$", 1.0),
    ("$(p,q,r)=(3,2,7)$", "$(3,2,7)$", 1.0),
    ("$V_{1}:V_{2}=11:21$", "$11:21$", 1.0),
    (
        "$(2,1),(1,2),(-1,-20),(-20,-1)$",
        "solutions are:\n\n\\[\n\\boxed{(1, 2)}, \\boxed{(2, 1)}, \\boxed{(-1, -20)}, \\boxed{(-20, -1)}\n\\]",
        1.0,
    ),
    ("\\(\\boxed{1}\\) and \\(\\boxed{-2}\\).", "$\\boxed{-2,1}$.", 1.0),
    ("$\\text{odd}$", "$odd$", 1.0),
    ("$\\text{e}$", "$e$", 1.0),
    ("$d$", "$\\text{E}$", 0.0),
    ("$1$ and $2$ and $3$", "$\\boxed{1,2,3}$", 1.0),
    (
        "$(37,3,3),(17,3,3,7),(3,37,3,13),(3,17,3,7),(3,3,2,3)$",
        "$\\boxed{(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3), (3,17,3,7), (17,3,3,7), (37,3,3,13)}$",
        0.0,
    ),
    ("$(p,q)=(3,2)$", "$\\boxed{(3, 2)}$", 1.0),
    ("\\boxed{x = -5,\\ p = \\frac{14}{3}} ", "$\\boxed{-5, \\frac{14}{3}}$", 1.0),
    ("\\boxed{a=4,\\,-8,\\,-10}", "$\\boxed{-10,-8,4}$", 1.0),
    ("$21,16$ or $11$", "$21,16,11$", 1.0),
    ("\\n\\n\\[ \\boxed{p = -1 \\text{ and } p = \\dfrac{15}{8}} \\]", "$p=-1,p=\\frac{15}{8}$", 1.0),
    ("$0<f(x)<1$", "$(0,1)$", 1.0),
    ("\\(\\boxed{6 \\text{ and } 8}\\)", "$\\boxed{6,8}$", 1.0),
    ("$\\text{Even}$", "$Even$", 1.0),
    ("$$\\boxed{2}, \\boxed{3}, \\boxed{5}, \\boxed{7}, \\boxed{13}$$", "$${2, 3, 5, 7, 13}$$", 1.0),
    ("$$f(y) = y$$", "$$f(y) = y$$", 1.0),
    ("$$-793 < a < 10$$", "$$(-793, 10)$$", 1.0),
    ("$$\\text{The midpoints form a regular hexagon}$$", "$$\\text{The midpoints form a regular hexagon}$$", 1.0),
    ("$$a_3 = 2, a_{37} = 19$$", "$$\\boxed{a_{37} = 19, \\quad a_3 = 2}$$", 1.0),
    ("$$(2, 2), (1, 3), (3, 3)$$", "$$\\boxed{(2, 2), (1, 3), (3, 3)}$$", 1.0),
    ("$$(1, +\\infty)$$", "$$(1, +\\infty)$$", 1.0),
    (
        "$$x = \\frac{1}{2}, x = \\frac{-1 \\pm \\sqrt{13}}{4}$$",
        "$$\\boxed{x = \\frac{1}{2}, x = \\frac{-1 \\pm \\sqrt{13}}{4}}$$",
        1.0,
    ),
    ("$$0.06 \\text{ yuan}$$", "$$\\boxed{0.06 \\text{ yuan}}$$", 1.0),
    ("$$(5, 8), (8, 5)$$", "$$\\boxed{(x, y) = (5, 8) \\quad \\text{and} \\quad (8, 5)}$$", 1.0),
    ("$$667$$", "$$\\boxed{667}$$", 1.0),
    ("$$6 \\text{ and } 8$$", "$$\\boxed{6 \\text{ and } 8}$$", 1.0),
    ("$$(2, 2), (6, 2)$$", "$$\\boxed{(2, 2)} \\quad \\text{and} \\quad \\boxed{(6, 2)}$$", 1.0),
    ("$$(98, 2), (99, 503)$$", "$$\\boxed{(98, 2)} \\quad \\text{and} \\quad \\boxed{(99, 503)}$$", 1.0),
    ("$$(3, 3), (1, 1)$$", "$$\\boxed{(3, 3)} \\text{ for part (a) and } \\boxed{(1, 1)}$$", 1.0),
    ("$$k \\ge 2$$", "$$\\boxed{k \\ge 2}$$", 1.0),
    ("$$k = 45, n = 2$$", "$$\\boxed{k = 45} \\quad \\text{and} \\quad \\boxed{n = 2}$$", 1.0),
    (
        "$143$",
        "<think> Alright, let me try to figure out this problem. So, we need to find how many years between 2000 and 3000 inclusive can be written as the sum of two positive integers p and q such that 2p = 5q. The example given is 2016 = 1440 + 576, where 2*1440 = 2880 and 5*576 = 2880, so they are equal. First, I need to understand the relationship between p and q. The equation 2p = 5q implies that p and q are in a specific ratio. Let's solve for one variable in terms of the other. If 2p = 5q, then p = (5/2)q. That means p has to be a multiple of 5/2 times q. Since p and q are positive integers, q must be a multiple of 2 to make p an integer. Let's denote q = 2k, where k is a positive integer. Then p = (5/2)*(2k) = 5k. So, substituting back, the year can be written as p + q = 5k + 2k = 7k. Therefore, the year must be a multiple of 7. Wait, so that simplifies things. If the year must be a multiple of 7, then the problem reduces to finding how many multiples of 7 are there between 2000 and 3000 inclusive. But let me double-check this reasoning. Starting from 2p = 5q, we have p = (5/2)q. Since p must be an integer, q must be even. Let q = 2k, then p = 5k. So, the sum p + q = 5k + 2k = 7k. Therefore, every year that is a multiple of 7 can be expressed in such a way. Conversely, if a year is a multiple of 7, say N = 7k, then we can set q = 2k and p = 5k, which are integers. So, yes, the problem is equivalent to finding the number of multiples of 7 between 2000 and 3000 inclusive. Therefore, I need to count how many numbers divisible by 7 are in the range [2000, 3000]. To do this, I can find the smallest multiple of 7 in this range and the largest multiple of 7, then compute how many terms are in this arithmetic sequence. Let me first find the smallest multiple of 7 greater than or equal to 2000. Dividing 2000 by 7: 2000 ÷ 7 ≈ 285.714. So, 285 * 7 = 1995, which is less than 2000. The next multiple is 286 * 7 = 2002. Therefore, 2002 is the first multiple of 7 in the range. Now, the largest multiple of 7 less than or equal to 3000. Dividing 3000 by 7: 3000 ÷ 7 ≈ 428.571. So, 428 * 7 = 2996. But 428*7=2996, which is less than 3000. The next multiple would be 429*7=3003, which is over 3000. So, the largest multiple is 2996. Now, the number of terms in the arithmetic sequence from 2002 to 2996, with common difference 7. The formula for the number of terms in an arithmetic sequence is ((last term - first term)/common difference) + 1. So, ((2996 - 2002)/7) + 1 = (994/7) + 1. Let me compute 994 divided by 7. 7*142=994. So, 142 + 1 = 143. Therefore, there are 143 multiples of 7 between 2000 and 3000 inclusive. But wait, let me confirm. If we have terms starting at 2002, each term 7 apart, up to 2996. The difference between 2996 and 2002 is 994. Dividing by 7 gives 142, which means there are 142 intervals of 7, hence 143 terms. That seems right. But let me check with another method. The number of multiples of 7 up to n is floor(n/7). So, the number of multiples up to 3000 is floor(3000/7)=428, as 7*428=2996. The number of multiples up to 1999 is floor(1999/7)=285, since 7*285=1995. So, the number of multiples between 2000 and 3000 inclusive is 428 - 285. But wait, 428 counts up to 2996, which is within 3000. However, 285 counts up to 1995, so the next multiple is 2002. So, the number of multiples from 2002 to 2996 is 428 - 285 = 143. But wait, 428 - 285 = 143? Let me compute 428 - 285. 428 - 200 = 228, 228 - 85 = 143. Yes. So that's 143. However, is 2002 included? Because 285 counts up to 1995, so 1995 is the 285th multiple, then the next one is 2002 which is 286th. So, from 286th to 428th multiple, how many terms? 428 - 286 + 1 = 143. Yes, because (428 - 286) = 142, plus 1 is 143. So that confirms the answer is 143. But wait, the problem states \\\"between 2000 and 3000 inclusive\\\". However, 2002 is the first multiple of 7 in that range. So, if we need to include 2000, but 2000 is not a multiple of 7, so the count remains 143. Therefore, the answer is 143. But let me check the example given. 2016 is in the range. 2016 divided by 7 is 288, so 2016 is the 288th multiple of 7. So, 288 - 285 = 3, but according to the previous count, 428 - 285 = 143. But 2016 is within the range. So, perhaps my initial calculation is correct. Wait, 428 - 285 = 143. But if the first multiple is 2002 (286th multiple), and the last is 2996 (428th multiple), then the number of terms is 428 - 286 + 1 = 143. So, yes. So, 143 is the answer. Wait, but let me test with smaller numbers. Suppose between 7 and 14 inclusive. How many multiples of 7? 7,14. So two numbers. Applying the formula: floor(14/7)=2, floor(6/7)=0, so 2-0=2. Correct. Similarly, between 15 and 21. The multiples are 21. So floor(21/7)=3, floor(14/7)=2, 3-2=1. Correct. So, the formula works when the upper bound is a multiple. If upper bound is not a multiple, like between 15 and 20. The multiples are 21 is beyond, so 14 is the last multiple below 20. Wait, no, 14 is 14, 21 is 21. Wait, between 15 and 20, there are no multiples of 7. So floor(20/7)=2, floor(14/7)=2, 2-2=0. Correct. So, formula works. So in the original problem, floor(3000/7)=428, floor(1999/7)=285. So, 428-285=143. Therefore, the answer is 143. But wait, the example given is 2016, which is 7*288. So, 288 is within the 286 to 428 range. 288-285=3, but in the total count, it's 143. So, all multiples from 2002 up to 2996. So, 143 years. Therefore, the answer is 143. So, \\boxed{143} **Final Answer** \\boxed{143} </think> To determine how many years between 2000 and 3000 inclusive can be written as the sum of two positive integers \\( p \\) and \\( q \\) such that \\( 2p = 5q \\), we start by analyzing the relationship between \\( p \\) and \\( q \\). Given \\( 2p = 5q \\), we can express \\( p \\) in terms of \\( q \\): \\( p = \\frac{5}{2}q \\). For \\( p \\) and \\( q \\) to be integers, \\( q \\) must be a multiple of 2. Let \\( q = 2k \\), then \\( p = 5k \\). The sum \\( p + q = 5k + 2k = 7k \\), indicating the year must be a multiple of 7. Next, we need to count the multiples of 7 between 2000 and 3000 inclusive. 1. **Finding the smallest multiple of 7 ≥ 2000**: \\[ \\left\\lceil \\frac{2000}{7} \\right\\rceil = 286 \\quad \\text{(since } 286 \\times 7 = 2002\\text{)} \\] 2. **Finding the largest multiple of 7 ≤ 3000**: \\[ \\left\\lfloor \\frac{3000}{7} \\right\\rfloor = 428 \\quad \\text{(since } 428 \\times 7 = 2996\\text{)} \\] 3. **Counting the number of multiples of 7 between 2002 and 2996**: \\[ \\text{Number of terms} = 428 - 286 + 1 = 143 \\] Thus, the number of years between 2000 and 3000 inclusive that can be written as the sum of two positive integers \\( p \\) and \\( q \\) such that \\( 2p = 5q \\) is \\(\\boxed{143}\\).",
        1.0,
    ),
    ("$${1,2,3}$$", "\\boxed{1} and \\boxed{2} and \\boxed{3}", 1.0),
    ("$${1,2,3}$$", "\\boxed{1},\\boxed{2},\\boxed{3}", 1.0),
    ("$$|AB|=1$$", "$$1$$", 1.0),
    ("$$A:B=1$$", "$$1$$", 1.0),
    ("$$f(x)=1$$", "$$1$$", 1.0),
    (
        "$y_{1}=-2 x^{2}+4 x+3, y_{2}=3 x^{2}+12 x+10$",
        "\\($y_1 = \\boxed{-2(x - 1)^2 + 5} \\) and \\( y_2 = \\boxed{3(x + 2)^2 - 2} \\) ",
        1.0,
    ),
    (
        "$x_{1}=\\frac{1}{2}+\\frac{31\\sqrt{5}}{216},\\quadx_{2}=\\frac{1}{2}-\\frac{31\\sqrt{5}}{216}$",
        "$\\boxed{\\dfrac{108 + 31\\sqrt{5}}{216}} \\quad \\text{and} \\quad \\boxed{\\dfrac{108 - 31\\sqrt{5}}{216}}$",
        1.0,
    ),
    ("\\boxed{1} no no no no no \\boxed{2}", "$\\boxed{1,2}$", 0.0),
]

# Same, with decimal_comma=True
DECIMAL_COMMA = [
    ("1000.99", "1000,99", 1.0),
    ("1,22", "1.22", 1.0),
    ("0,111", "0.111", 1.0),
]

# (gold, prediction, math-verify's verdict, rewardsmith's score, rewardsmith's score with the last-math/number fallbacks)
NO_ANCHOR = [
    ("1000", "1 000", 1.0, 0.0, 0.0),
    ("2.74", "Soucis : 2,74 $ a..", 1.0, 0.0, 0.0),
    ("1000.99", "$1,000.99", 1.0, 0.0, 1.0),
    ("1000.99", "1,000.99$", 1.0, 0.0, 1.0),
    ("1000.99", "the number is not 10 which is 1,000.99€", 1.0, 0.0, 1.0),
    ("1000.99", "so the number is 10 which is 1,000.99m²", 1.0, 0.0, 1.0),
    ("1000.99", "not it's not 10 it's 1,000.99m²", 1.0, 0.0, 1.0),
    ("$9$", "Answer \\[ 9 \\]", 1.0, 0.0, 1.0),
    ("$9$", "Answer $ 9 $", 1.0, 0.0, 1.0),
    ("$9$", "Answer $$ 9 $$", 1.0, 0.0, 1.0),
    ("$9$", "Answer \\( 9 \\)", 1.0, 0.0, 1.0),
    ("$10$", "Answer \\( (9+1) \\)", 1.0, 0.0, 1.0),
    ("$9$", "Answer \\[ \n 9 \n \\]", 1.0, 0.0, 1.0),
    ("$9$", "Answer $$ \n 9 \n $$", 1.0, 0.0, 1.0),
    ("$10/9$", "Answer $ \\frac{1}{2} \\$ = \\frac{10}{9} $", 1.0, 0.0, 0.0),
    ("$28\\%$", "28 percent", 1.0, 0.0, 1.0),
    ("$28\\%$", "28 pct", 1.0, 0.0, 1.0),
    ("$28\\%$", "28 %", 1.0, 0.0, 1.0),
    ("$28\\%$", "$28$ %", 1.0, 0.0, 1.0),
    ("$28\\%$", "$28$ percent", 1.0, 0.0, 1.0),
    ("$x >= 5$", "Therefore $x \\geq 5$ is the solution.", 1.0, 0.0, 1.0),
    ("$x < 3$", "We find that $x \\lt 3$.", 1.0, 0.0, 1.0),
    ("$x \\leq 2$", "Thus $x <= 2$ is our answer.", 1.0, 0.0, 1.0),
    ("$x > 5$", "Therefore $x \\gt 5$ is the solution.", 1.0, 0.0, 1.0),
    ("$x != 3$", "We find that $x \\neq 3$.", 1.0, 0.0, 1.0),
    ("$x \\neq 5$", "The solution is $x != 5$", 1.0, 1.0, 1.0),  # a closing statement on the last line
    (
        "$\\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix}$",
        "The identity matrix is $ \\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix} $.",
        1.0,
        0.0,
        1.0,
    ),
    (
        "$\\begin{bmatrix}0 & 0 \\\\0 & 0\\end{bmatrix}$",
        "Here is a zero matrix: $ \\begin{pmatrix}0 & 0 \\\\0 & 0\\end{pmatrix} $",
        1.0,
        0.0,
        1.0,
    ),
    (
        "$\\begin{pmatrix}1 & 2 \\\\3 & 4\\end{pmatrix}$",
        "Special matrix: $ \\left[\\begin{array}{cc}1 & 2 \\\\3 & 4\\end{array}\\right] $",
        1.0,
        0.0,
        1.0,
    ),
    (
        "$\\begin{pmatrix}\\frac{1}{2} & \\frac{3}{4} \\\\ \\frac{5}{6} & \\frac{7}{8}\\end{pmatrix}$",
        "Matrix with fractions: $ \\begin{pmatrix}\\frac{1}{2} & \\frac{3}{4} \\\\ \\frac{5}{6} & \\frac{7}{8}\\end{pmatrix} $",
        1.0,
        0.0,
        1.0,
    ),
    (
        "$\\begin{pmatrix}6 & 8 \\\\ 10 & 12\\end{pmatrix}$",
        "The sum is $\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix} + \\begin{pmatrix}5 & 6 \\\\ 7 & 8\\end{pmatrix}$",
        1.0,
        1.0,  # a closing statement on the last line
        1.0,
    ),
    (
        "$\\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix}$",
        "When multiplying by identity: $\\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix} \\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix}$",
        1.0,
        0.0,
        1.0,
    ),
    (
        "$2/3$",
        "and then Alice wins the game from that point on. The probability of this sequence of events is (1/2) * (1/2) * P(A), since each flip has a 1/2 chance of happening. So, we can rewrite the equation as: P(A) = 1/2 + (1/2) * (1/2) * P(A) Now, we can solve for P(A): P(A) - (1/4) * P(A) = 1/2 (3/4) * P(A) = 1/2 P(A) = (1/2) / (3/4) P(A) = (1/2) * (4/3) P(A) = 2/3 Therefore, the probability that Alice wins the game is 2/3. <|im_start|>user",
        1.0,
        0.0,
        1.0,  # the last number read as the whole token 2/3, not its last integer
    ),
    (
        "$12$",
        "Let's denote the common difference of the arithmetic sequence as $d$. Since the first term is 1, the sequence can be written as $1, 1+d, 1+2d, 1+3d, \\dots$. We are given that another term of the sequence is 91. So, there exists an integer $n$ such that $1+nd = 91$. Solving for $d$, we get $d = \\frac{90}{n}$. Since $d$ must be an integer, $n$ must be a divisor of 90. The divisors of 90 are 1, 2, 3, 5, 6, 9, 10, 15, 18, 30, 45, and 90. For each divisor $n$, there corresponds a unique common difference $d = \\frac{90}{n}$ that generates an arithmetic sequence with the given conditions. Therefore, there are 12 distinct arithmetic sequences that meet the three given conditions. I hope it is correct. <|im_start|>user",
        1.0,
        0.0,
        0.0,
    ),
    (
        "$(7,6)$",
        "First, let's simplify the second equation by moving all terms involving $x$ to the left side and all terms involving $y$ to the right side: $x - 0.6x = -y + 8.8$ This simplifies to: $0.4x = -y + 8.8$ Now, let's solve for $y$: $y = 8.8 - 0.4x$ Now, substitute this expression for $y$ into the first equation: $2x - 3(8.8 - 0.4x) = -3.2 - 0.2x + 0.1(8.8 - 0.4x)$ Simplify the equation: $2x - 26.4 + 1.2x = -3.2 - 0.2x + 0.88 - 0.04x$ Combine like terms: $3.2x - 26.4 = -2.32 - 0.24x$ Add $0.24x$ to both sides and add $26.4$ to both sides: $3.44x = 24.08$ Now, divide by $3.44$ to solve for $x$: $x = \\frac{24.08}{3.44} = 7$ Now, substitute this value of $x$ back into the expression for $y$: $y = 8.8 - 0.4(7)$ $y = 8.8 - 2.8 = 6$ So, the ordered pair $(x, y)$ that solves the system is $(7, 6)$. I apologize for the mistake in the previous response. Let's correct it. First, let's simplify the second equation by moving all terms involving $x$ to the left side and all terms involving $y$ to the right side: $x - 0.6x = -y + 8.8$ This simplifies to: $0.4x = -y + 8.8$ Now, let's solve for $y$: $y = 8.8 - 0.4x$ Now, substitute this expression for $y$ into the first equation: $2x - 3(8.8 - 0.4x) = -3.2 - 0.2x + 0.1(8.8 - 0.4x)$ Simplify the equation: $2x - 26.4 + 1.2x = -3.2 - 0.2x + 0.88 - 0.04x$ Combine like terms: $3.2x - 26.4 = -2.32 - 0.24x$ Add $0.24x$ to both sides and add $26.4$ to both sides: $3.44x = 24.08$ Now, divide by $3.44$ to solve for $x$: $x = \\frac{24.08}{3.44} = 7$ Now, substitute this value of $x$ back into the expression for $y$: $y = 8.8 - 0.4(7)$ $y = 8.8 - 2.8 = 6$ So, the ordered pair $(x, y)$ that solves the system is $(7, 6)$. <|im_start|>user",
        1.0,
        0.0,
        1.0,
    ),
    (
        "$100%$",
        "Let the original error in the measurement of the particle's momentum be $\\Delta p$ and the original error in the measurement of its position be $\\Delta x$. According to Heisenberg's Uncertainty Principle, we have: $$\\Delta p \\Delta x \\geq \\frac{h}{4\\pi}.$$ Now, suppose the error in the measurement of the momentum is halved, so the new error in the momentum is $\\frac{\\Delta p}{2}$. Let the new error in the measurement of the position be $\\Delta x'$. Then, we have: $$\\frac{\\Delta p}{2} \\Delta x' \\geq \\frac{h}{4\\pi}.$$ Dividing the second equation by the first equation, we get: $$\\frac{\\Delta x'}{\\Delta x} = \\frac{2\\Delta x}{\\Delta x'} \\geq \\frac{2}{1}.$$ Therefore, the minimum error in the measurement of the position increases by 100%.",
        1.0,
        0.0,
        0.0,
    ),
    ("\\\\boxed{W(n) = 1 \\\\text{ and } W(n) = -1", "W(x)=1orW(x)=-1", 1.0, 0.0, 1.0),
]

# (gold, prediction, rewardsmith's score)
OTHER = [
    (
        "$\\\\boxed{35 cm} ++++++ \\\\boxed{4}$",
        "${35 cm,4}$",
        0.0,
    ),  # math-verify: 1.0; gold boxes joined by '++++++' (not an adjacent group): rewardsmith reads the last box, 4
    (
        "$x_{1}=10^{\\frac{-5+\\sqrt{13}}{6}},\\quadx_{2}=10^{\\frac{-5-\\sqrt{13}}{6}}$",
        "$\\boxed{10^{\\frac{\\sqrt{13} - 5}{6}}} \\quad \\text{and} \\quad \\boxed{10^{-\\frac{5 + \\sqrt{13}}{6}}}$",
        None,
    ),  # math-verify: 1.0; the gold's '\\quadx_{2}' is one unknown command (a missing space in the source), so its second part is unreadable
    (
        "\\boxed{1} papers and \\boxed{2} bins",
        "$\\boxed{1,2}$",
        0.0,
    ),  # math-verify: 1.0; gold boxes separated by the word 'papers': not adjacent, so rewardsmith reads the last box, 2
]


@pytest.fixture(scope="module")
def reward():
    reward = MathEquivalence(workers=2, timeout_s=10)
    yield reward
    reward.close()


@pytest.fixture(scope="module")
def unanchored():
    reward = MathEquivalence(workers=2, timeout_s=10, fallback_last_math=True, fallback_last_number=True)
    yield reward
    reward.close()


def test_agreement_is_large():
    assert len(AGREE) + len(DECIMAL_COMMA) >= 90
    assert sum(case[4] == case[2] for case in NO_ANCHOR) >= 30


@pytest.mark.parametrize("case", AGREE, ids=[_id(c) for c in AGREE])
def test_agrees_with_math_verify(reward, case):
    gold, prediction, expected = case
    (result,) = reward.details([prediction], solution=[gold])
    assert result.score == expected, result.reason


@pytest.mark.parametrize("case", DECIMAL_COMMA, ids=[_id(c) for c in DECIMAL_COMMA])
def test_agrees_with_decimal_comma(case):
    gold, prediction, expected = case
    (result,) = MathEquivalence(symbolic=False, decimal_comma=True).details([prediction], solution=[gold])
    assert result.score == expected, result.reason


@pytest.mark.parametrize("case", NO_ANCHOR, ids=[_id(c) for c in NO_ANCHOR])
def test_free_text_without_an_anchor(reward, unanchored, case):
    gold, prediction, _, score, with_fallbacks = case
    (result,) = reward.details([prediction], solution=[gold])
    assert result.score == score, result.reason
    assert score == 1.0 or "no final answer" in result.reason
    (result,) = unanchored.details([prediction], solution=[gold])
    assert result.score == with_fallbacks, result.reason


@pytest.mark.parametrize("case", OTHER, ids=[_id(c) for c in OTHER])
def test_other_differences_are_as_documented(reward, case):
    gold, prediction, score = case
    (result,) = reward.details([prediction], solution=[gold])
    assert result.score == score, result.reason
