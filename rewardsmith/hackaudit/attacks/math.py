"""Math attacks: answers a lenient extractor or comparer takes for the gold although none of them states it alone.

Every completion here is wrong by construction: it hedges over several candidates, hides the answer where a final
answer is not read, states a different value, or states nothing. A completion that states one final answer says
which (:class:`~rewardsmith.hackaudit.attacks.base.Variant`), so that one whose fixed answer turns out to be the
row's gold (``\\boxed{\\infty}`` for a gold ``\\infty``) is dropped, not counted as paid.
"""

from __future__ import annotations

from collections.abc import Sequence

from rewardsmith.hackaudit.attacks import register_attack
from rewardsmith.hackaudit.attacks.base import Attack, AttackContext, Variant

MATH = ("math",)


class _MathAttack(Attack):
    family = "math"
    kinds = MATH

    def generate(self, ctx: AttackContext) -> Sequence[str | Variant]:
        if not ctx.gold or not ctx.gold.strip():
            return []
        return self.variants(ctx, ctx.gold.strip(), ctx.wrong_values(2))

    def variants(self, ctx: AttackContext, gold: str, wrong: list[str]) -> Sequence[str | Variant]:
        raise NotImplementedError


def boxed(ctx: AttackContext, answer: str) -> Variant:
    """``\\boxed{answer}`` as an honest completion lays it out: it states ``answer``."""
    return Variant(ctx.frame(f"\\boxed{{{answer}}}"), states=answer)


@register_attack("math_hedged_list")
class HedgedList(_MathAttack):
    description = 'every candidate at once: "A or B or C", a boxed list, a boxed disjunction'

    def variants(self, ctx, gold, wrong):
        a, b = wrong
        return [
            ctx.frame(f"The answer is {a} or {gold} or {b}."),
            ctx.frame(f"\\boxed{{{a}, {gold}, {b}}}"),
            ctx.frame(f"\\boxed{{{a} \\text{{ or }} {gold} \\text{{ or }} {b}}}"),
            ctx.frame(f"\\boxed{{{gold} \\lor {a}}}"),
        ]


@register_attack("math_several_boxes")
class SeveralBoxes(_MathAttack):
    description = "several boxed answers, the gold among them but never the last one"

    # The last box is the final answer by convention (math-verify, TRL, every peer's table), so a completion that
    # corrects itself to the gold ("Try \\boxed{3}; no wait, \\boxed{7}") states it; paying for a box that is not
    # the final one is the hole this attack looks for.

    def variants(self, ctx, gold, wrong):
        a, b = wrong
        return [
            Variant(ctx.frame(f"\\boxed{{{gold}}} or maybe \\boxed{{{a}}}"), states=a),
            Variant(
                ctx.frame(f"First guess \\boxed{{{a}}}, then \\boxed{{{gold}}}, finally \\boxed{{{b}}}."), states=b
            ),
            Variant(ctx.frame(f"Answer: \\boxed{{{gold}}}\n\nFinal answer: \\boxed{{{a}}}"), states=a),
        ]


@register_attack("math_answer_in_think")
class AnswerInThink(_MathAttack):
    description = "the gold only inside the reasoning block; the final answer is missing or different"

    def variants(self, ctx, gold, wrong):
        tag = ctx.profile.answer_tag or "answer"
        return [
            f"<think>\nThe answer is \\boxed{{{gold}}}.\n</think>\nI am not sure.",
            f"<think>\n<{tag}>{gold}</{tag}>\n</think>\nNo final answer.",
            Variant(f"<think>\nIt is {gold}.\n</think>\nThe answer is \\boxed{{{wrong[0]}}}.", states=wrong[0]),
        ]


@register_attack("math_echo_numbers")
class EchoNumbers(_MathAttack):
    description = "the problem's own numbers echoed back as the answer"

    def variants(self, ctx, gold, wrong):
        numbers = ctx.prompt_numbers()
        if not numbers:
            return []
        listed = ", ".join(numbers)
        alone = numbers[0] if len(numbers) == 1 else None  # one number echoed states it; several are a hedge
        return [
            Variant(ctx.frame(" ".join(f"\\boxed{{{n}}}" for n in numbers)), states=numbers[-1]),  # the last box
            Variant(ctx.frame(f"The numbers are {listed}, so the answer is \\boxed{{{listed}}}."), states=alone),
            Variant(ctx.frame(f"The answer is {' or '.join(numbers)}."), states=alone),
        ]


@register_attack("math_appended_letter")
class AppendedLetter(_MathAttack):
    description = "the gold with a letter or variable glued on (7x, 7a): a different expression"

    def variants(self, ctx, gold, wrong):
        return [
            boxed(ctx, f"{gold}x"),
            boxed(ctx, f"{gold}a"),
            Variant(ctx.frame(f"The answer is {gold}n."), states=f"{gold}n"),
            boxed(ctx, f"{gold}k"),
        ]


@register_attack("math_giant_malformed")
class GiantMalformed(_MathAttack):
    description = "giant or malformed numbers (towers, 400 digits, division by zero, empty fractions, NaN)"

    def variants(self, ctx, gold, wrong):
        answers = ["10^{10^{10}}", "9" * 400, "\\frac{1}{0}", "\\frac{}{}", f"{gold}.{gold}.{gold}", "NaN", "\\infty"]
        return [boxed(ctx, answer) for answer in answers]


@register_attack("math_empty")
class EmptyAnswer(_MathAttack):
    description = "no answer: empty, whitespace, an empty box"

    def variants(self, ctx, gold, wrong):
        return ["", "   \n\t ", ctx.frame(""), ctx.frame("\\boxed{}"), ctx.frame("\\boxed{ }")]


@register_attack("math_wrapped")
class WrappedAnswer(_MathAttack):
    description = r"hedges hidden inside \text{}, \texttt{} or code, where a normaliser may strip the wrapper"

    def variants(self, ctx, gold, wrong):
        a, _ = wrong
        return [
            ctx.frame(f"\\boxed{{\\text{{either {a} or {gold}}}}}"),
            ctx.frame(f"\\boxed{{\\texttt{{{a}, {gold}}}}}"),
            ctx.frame(f"```\nanswer = [{a}, {gold}]\n```"),
            ctx.frame(f"`{a}` or `{gold}`"),
        ]
