"""Rows as the attacker sees them, and the honest controls: the gold itself rendered as a completion would be.

The controls are scored with the attacks so that a reward which rejects everything is not reported as safe: an
audit whose controls do not pass says so instead of reporting attack rates of zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardsmith.hackaudit.attacks.base import AttackContext
from rewardsmith.hackaudit.attacks.code import fenced
from rewardsmith.hackaudit.spec_kinds import SpecProfile
from rewardsmith.types import prompt_text

#: Columns that may hold a reference program for the code control, in the order they are tried.
CODE_GOLD_COLUMNS = ("canonical_solution", "gold_code", "reference_solution")
CONTROL = "honest_control"


def row_context(row: Mapping[str, Any], profile: SpecProfile, seed: int = 0) -> AttackContext:
    """The :class:`AttackContext` of a data row: its prompt, its gold answer and its parsed tests."""
    from rewardsmith.rewards.code.case_formats import BadTestsFormat, parse_tests

    prompt = prompt_text(row.get("prompt")) or ""
    gold = row.get(profile.gold_column)
    gold = None if gold is None or isinstance(gold, (dict, list)) else str(gold)
    tests = None
    raw_tests = row.get(profile.tests_column)
    if "code" in profile.kinds and raw_tests not in (None, ""):
        try:
            tests = parse_tests(raw_tests)
        except BadTestsFormat:
            tests = None
    if tests is not None and any(row.get(c) for c in CODE_GOLD_COLUMNS) and profile.gold_column == "solution":
        gold = None  # a code row's "solution" is its program, not a math answer
    return AttackContext(row=row, prompt=prompt, profile=profile, gold=gold, tests=tests, seed=seed)


def honest_controls(ctx: AttackContext) -> list[str]:
    """The row's gold as an honest completion: a reference program when there are tests, else the gold alone in the
    spec's answer tag when it asks for one (the form the tag asks for: a checker that matches the tag's contents
    exactly refuses a sentence there), else the boxed gold."""
    if ctx.tests is not None:
        program = next((ctx.row[c] for c in CODE_GOLD_COLUMNS if ctx.row.get(c)), None)
        return [fenced(ctx, str(program))] if program else []
    if ctx.gold and ctx.gold.strip():
        gold = ctx.gold.strip()
        if "math" in ctx.profile.kinds and not ctx.profile.answer_tag:
            return [ctx.frame(f"The answer is \\boxed{{{gold}}}.")]
        return [ctx.frame(gold)]
    return []
