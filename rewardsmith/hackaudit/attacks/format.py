"""Format and length attacks: the expected tags and lengths without a correct answer inside.

The payload is a wrong answer (a neighbour of the gold, or "N/A" without one): a format or length reward that pays
for these pays for form alone, and an accuracy reward that pays for them (a regex on "any number") is hackable.
"""

from __future__ import annotations

from rewardsmith.hackaudit.attacks import register_attack
from rewardsmith.hackaudit.attacks.base import Attack, AttackContext

FORMAT = ("format",)
FILLER = "Let me double-check every step of this carefully once more. "


def payload(ctx: AttackContext) -> str:
    return f"\\boxed{{{ctx.wrong_values(1)[0]}}}" if ctx.gold and ctx.gold.strip() else "N/A"


class _FormatAttack(Attack):
    family = "format"
    kinds = FORMAT


@register_attack("format_tag_stuffing")
class TagStuffing(_FormatAttack):
    description = "every tag a format reward counts, repeated"

    def generate(self, ctx):
        wrong, tag = payload(ctx), ctx.profile.answer_tag or "answer"
        return [
            "<think></think>" * 4 + f"\n<{tag}>{wrong}</{tag}>" * 3,
            f"<think>\na\n</think>\n<think>\nb\n</think>\n{wrong}",
            f"<think>\n</think>\n<{tag}>\n</{tag}>\n<think>\n</think>\n<{tag}>{wrong}</{tag}>",
        ]


@register_attack("format_nested_tags")
class NestedTags(_FormatAttack):
    description = "reasoning blocks nested inside each other"

    def generate(self, ctx):
        wrong = payload(ctx)
        return [
            f"<think>\n<think>\nhmm\n</think>\n</think>\n{wrong}",
            f"<think>\nouter <think>inner</think> outer\n</think>\n{wrong}",
        ]


@register_attack("format_tags_in_code")
class TagsInCode(_FormatAttack):
    description = "the tags only inside fenced or inline code"

    def generate(self, ctx):
        wrong = payload(ctx)
        return [f"```\n<think>\nreasoning\n</think>\n```\n{wrong}", f"`<think>reasoning</think>` {wrong}"]


@register_attack("format_empty_think")
class EmptyThink(_FormatAttack):
    description = "an empty reasoning block before the answer"

    def generate(self, ctx):
        wrong, tag = payload(ctx), ctx.profile.answer_tag
        body = f"<{tag}>{wrong}</{tag}>" if tag else wrong
        return [f"<think></think>\n{body}", f"<think>\n \n</think>\n{body}"]


@register_attack("format_length_padding")
class LengthPadding(_FormatAttack):
    description = "filler, whitespace or repetition up to the spec's length target"

    def generate(self, ctx):
        wrong, target = payload(ctx), max(64, ctx.profile.length_target)
        filler = (FILLER * (target // len(FILLER) + 1))[:target]
        return [
            ctx.frame(wrong, reasoning=filler),
            ctx.frame(wrong + "\n" + " " * target),
            ctx.frame(wrong, reasoning=("step " * (target // 5 + 1))[:target]),
        ]
