"""Completeness beside soundness: each row's gold written the other right ways models write it, and the share paid.

The attacks measure soundness (wrong answers the reward pays) and the honest control one right form. A reward can
pass both and still refuse right answers written otherwise: a right ``**4**``, a bare final line, an answer in
``<answer>`` tags, ``\\dfrac``, a unit, an unfenced program. Such a reward starves learning (the policy is punished
for being right in its own words), so the audit scores every row's gold in each of those forms and reports the share
paid per form, with Wilson 95 % intervals. A form whose share's upper bound is below one half is one the reward
refuses: the report says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.audit.stats import wilson
from rewardsmith.hackaudit.attacks.base import AttackContext
from rewardsmith.hackaudit.controls import CODE_GOLD_COLUMNS, row_context
from rewardsmith.hackaudit.spec_kinds import SpecProfile

#: a form is refused when the upper bound of the share of its rows paid falls below this
REFUSED_BELOW = 0.5
#: "in km/h", "(in cm)" in a prompt: the unit a right answer may carry
_UNIT = re.compile(
    r"\bin\s+(km/h|m/s|km|cm|mm|m|kg|g|hours|minutes|seconds|dollars|degrees|square meters|meters)\b",
    re.IGNORECASE,
)


def math_forms(ctx: AttackContext) -> dict[str, str]:
    """The gold as right answers in the forms models write, each laid out as the spec expects (``ctx.frame``)."""
    gold = (ctx.gold or "").strip()
    if not gold:
        return {}
    forms = {
        "bold": ctx.frame(f"The answer is **{gold}**."),
        "bare last line": ctx.frame(gold),
        "answer tags": f"<think>\nLet me work through the problem.\n</think>\n<answer>{gold}</answer>",
        "final statement": ctx.frame(f"Therefore, the final answer is {gold}."),
        "spaces": ctx.frame(f"The answer is \\boxed{{ {gold} }}."),
    }
    if "\\frac" in gold:
        forms["dfrac"] = ctx.frame(f"The answer is \\boxed{{{gold.replace(chr(92) + 'frac', chr(92) + 'dfrac')}}}.")
    unit = _UNIT.search(ctx.prompt)
    if unit and re.fullmatch(r"-?\d+(?:\.\d+)?", gold):
        forms["unit"] = ctx.frame(f"The answer is {gold} {unit.group(1)}.")
    return forms


def code_forms(ctx: AttackContext) -> dict[str, str]:
    """The reference program as models write it: unfenced, fenced with a ``py`` tag, fenced without a language."""
    program = next((str(ctx.row[c]) for c in CODE_GOLD_COLUMNS if ctx.row.get(c)), None)
    if ctx.tests is None or not program:
        return {}
    body = program.rstrip()
    return {
        "unfenced code": ctx.frame(body, reasoning="I will write the solution."),
        "py fence": ctx.frame(f"```py\n{body}\n```", reasoning="I will write the solution."),
        "bare fence": ctx.frame(f"```\n{body}\n```", reasoning="I will write the solution."),
    }


def right_forms(row: Mapping[str, Any], profile: SpecProfile, seed: int = 0) -> dict[str, str]:
    """Every right form of the row's gold that applies to it (code forms for rows with tests, math forms else)."""
    ctx = row_context(row, profile, seed=seed)
    return code_forms(ctx) if ctx.tests is not None else math_forms(ctx)


def measure_completeness(
    reward: Any, rows: Sequence[Mapping[str, Any]], profile: SpecProfile, *, threshold: float = 1.0, seed: int = 0
) -> dict[str, Any]:
    """Score every row's right forms with ``reward``: per form, how many rows it pays (score >= ``threshold``), with
    a Wilson 95 % interval; unscorable verdicts (None) are counted apart, never as refusals. ``refused`` lists the
    forms whose upper bound is below :data:`REFUSED_BELOW`, with one refused completion each."""
    planned = [(i, form, text) for i, row in enumerate(rows) for form, text in right_forms(row, profile, seed).items()]
    per_form: dict[str, dict[str, Any]] = {}
    examples: dict[str, dict[str, Any]] = {}
    for start in range(0, len(planned), 64):
        batch = planned[start : start + 64]
        batch_rows = [rows[i] for i, _, _ in batch]
        columns = {k: [r.get(k) for r in batch_rows] for k in batch_rows[0] if k != "completion"}
        results = reward.details([text for _, _, text in batch], **columns)
        for (i, form, text), result in zip(batch, results, strict=True):
            counts = per_form.setdefault(form, {"n": 0, "paid": 0, "unscorable": 0})
            if result.score is None:
                counts["unscorable"] += 1
                continue
            counts["n"] += 1
            if result.score >= threshold:
                counts["paid"] += 1
            else:
                examples.setdefault(
                    form, {"row": i, "completion": text, "score": result.score, "reason": result.reason}
                )
    for counts in per_form.values():
        n = counts["n"]
        counts["rate"] = counts["paid"] / n if n else None
        counts["low"], counts["high"] = wilson(counts["paid"] / n, n) if n else (None, None)
    judged = sum(c["n"] for c in per_form.values())
    paid = sum(c["paid"] for c in per_form.values())
    low, high = wilson(paid / judged, judged) if judged else (None, None)
    refused = [f for f, c in per_form.items() if c["n"] and c["high"] < REFUSED_BELOW]
    return {
        "forms": per_form,
        "overall": {"n": judged, "paid": paid, "rate": paid / judged if judged else None, "low": low, "high": high},
        "refused": refused,
        "refused_examples": {f: examples[f] for f in refused if f in examples},
    }


def _pct(c: Mapping[str, Any]) -> str:
    if c.get("rate") is None:
        return "n/a"
    return f"{c['rate'] * 100:.1f}% [{c['low'] * 100:.1f}, {c['high'] * 100:.1f}]"


def completeness_findings(metrics: Mapping[str, Any]) -> list[str]:
    """One finding when the reward refuses a right form (none when completeness was not measured)."""
    block = metrics.get("completeness")
    if not block or not block["refused"]:
        return []
    each = ", ".join(f"{f} {block['forms'][f]['paid']}/{block['forms'][f]['n']}" for f in block["refused"])
    return [
        f"REFUSES RIGHT ANSWERS: right answers written another way are scored wrong ({each} paid; all right forms "
        f"{_pct(block['overall'])}): a reward that refuses right answers starves learning"
    ]


def completeness_markdown(metrics: Mapping[str, Any]) -> list[str]:
    """The summary's completeness section: the share of each right form paid."""
    block = metrics.get("completeness")
    if not block or not block["forms"]:
        return []
    lines = [
        "",
        "## Completeness: right answers written other ways (Wilson 95% CI)",
        "",
        "| right form | paid | rate [95% CI] | unscorable |",
        "|---|---|---|---|",
    ]
    for form, c in block["forms"].items():
        lines.append(f"| {form} | {c['paid']}/{c['n']} | {_pct(c)} | {c['unscorable']} |")
    lines.append(
        f"| all right forms | {block['overall']['paid']}/{block['overall']['n']} | {_pct(block['overall'])} | |"
    )
    return lines
