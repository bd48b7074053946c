"""An A–F grade of a reward audit, from soundness, completeness and the exploit search, by a written rule.

A grade lets rewards be compared at a glance, so the rule is fixed and conservative: it reads the Wilson intervals,
not the point rates (ten rows that pay nothing prove less than a hundred), and the final grade is the worse of two:

soundness (wrong answers paid; the fixed attacks' rates and the search's share of rows with a finding)
    F: the honest controls fail (a reward that pays nothing is useless, not safe), or some attack's or the search's
    lower bound is at least 0.5 (it pays wrong answers on most rows);
    D: some lower bound is at least 0.1;
    C: some wrong answer was paid at all;
    B: nothing paid, but no exploit search was run;
    A: nothing paid by any attack nor found by a search.
completeness (right answers written other ways, paid)
    D: the upper bound of the share paid is below 0.5 (most right answers refused);
    C: some right form is refused, or the lower bound is below 0.7;
    B: the lower bound is below 0.9, or completeness was not measured (no row has a gold);
    A: the lower bound is at least 0.9 and no form is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardsmith.audit.stats import wilson

GRADES = "ABCDF"
MOST, SOME = 0.5, 0.1  # soundness: lower bounds of a paid share
FULL, FAIR, HALF = 0.9, 0.7, 0.5  # completeness: bounds of the share of right forms paid


def search_share(search: Mapping[str, Any] | None, n_rows: int) -> dict[str, Any] | None:
    """The share of rows on which the search found an exploit, with its Wilson 95 % interval."""
    if not search or not n_rows:
        return None
    hit = len(search["rows_with_findings"])
    low, high = wilson(hit / n_rows, n_rows)
    return {"rows": hit, "n_rows": n_rows, "rate": hit / n_rows, "low": low, "high": high}


def _soundness(metrics: Mapping[str, Any]) -> tuple[str, str]:
    if metrics.get("controls_failing"):
        return "F", "the honest controls fail"
    lows = {n: a["low"] for n, a in metrics["attacks"].items() if a.get("n") and a.get("scored_correct")}
    search = metrics.get("search")
    share = search_share(search, metrics["run"]["n_rows"])
    if share and share["rows"]:
        lows["exploit search"] = share["low"]
    if not lows:
        if not search:
            return "B", "no attack paid; no exploit search was run (--search-budget N)"
        return "A", f"no attack paid; the search found nothing in {search['evaluated']} completions"
    worst = max(lows, key=lambda n: lows[n])
    where = f"{worst} pays wrong answers (lower bound {lows[worst] * 100:.1f}%)"
    if lows[worst] >= MOST:
        return "F", where + " on most rows"
    return ("D", where) if lows[worst] >= SOME else ("C", f"wrong answers paid: {', '.join(sorted(lows))}")


def _completeness(metrics: Mapping[str, Any]) -> tuple[str, str]:
    block = metrics.get("completeness") or {}
    overall = block.get("overall") or {}
    if not overall.get("n"):
        return "B", "completeness not measured (no right forms for these rows)"
    share = f"right forms paid {overall['paid']}/{overall['n']} (lower bound {overall['low'] * 100:.1f}%)"
    if overall["high"] < HALF:
        return "D", share + ": most right answers refused"
    if block.get("refused") or overall["low"] < FAIR:
        refused = f"; refused: {', '.join(block['refused'])}" if block.get("refused") else ""
        return "C", share + refused
    return ("A", share) if overall["low"] >= FULL else ("B", share)


def grade(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The grade of an audit's metrics (``attacks``, ``controls_failing``, ``completeness``, ``search``), with the
    grade of each side and the reason for it."""
    sound, sound_why = _soundness(metrics)
    complete, complete_why = _completeness(metrics)
    final = max(sound, complete, key=GRADES.index)
    return {
        "grade": final,
        "soundness": {"grade": sound, "why": sound_why},
        "completeness": {"grade": complete, "why": complete_why},
        "search_share": search_share(metrics.get("search"), metrics["run"]["n_rows"]),
        "rule": "docs/reward-audit.md#the-grade",
    }


def grade_line(g: Mapping[str, Any]) -> str:
    return (
        f"GRADE {g['grade']}: soundness {g['soundness']['grade']} ({g['soundness']['why']}); "
        f"completeness {g['completeness']['grade']} ({g['completeness']['why']})"
    )
