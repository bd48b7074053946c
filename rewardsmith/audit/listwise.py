"""Position bias of a listwise (group) judge, measured from its own permuted presentations.

A group judged in several presentation orders (:class:`~rewardsmith.judges.group.GroupVerdict`) shows each
candidate at different slots. For every answered presentation the score a candidate got at a slot minus that
candidate's mean over the presentations is the slot's *deviation*; a position-neutral judge has deviations near
zero at every slot. Reported, each with an item (group) bootstrap interval:

- ``slot_deviation[s]``: mean deviation at slot ``s`` (0 = shown first), in normalised score units;
- ``first_minus_last``: deviation at the first slot minus at the last — with the mirrored second presentation a
  judge that adds ``b`` to whatever it sees first shows exactly ``b`` here;
- ``top_changed_rate``: share of groups whose presentations disagree on the best candidate;
- ``disagreement``: mean over groups of the per-candidate spread (max - min) across presentations.

Only groups with at least two answered presentations carry information; ``n_groups`` says how many did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rewardsmith.audit.stats import bootstrap


def slot_deviations(verdict: Any) -> list[float] | None:
    """Mean deviation per slot for one group verdict, or ``None`` with fewer than two answered presentations."""
    answered = [p for p in verdict.presentations if p.scores is not None]
    if len(answered) < 2:
        return None
    n = len(answered[0].order)
    means = [sum(p.scores[i] for p in answered) / len(answered) for i in range(n)]
    return [sum(p.scores[p.order[s]] - means[p.order[s]] for p in answered) / len(answered) for s in range(n)]


def listwise_position_metrics(verdicts: Sequence[Any], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The metrics of the module docstring over group verdicts (as JSON-ready dicts)."""
    usable = [(v, d) for v in verdicts if (d := slot_deviations(v)) is not None]
    n = len(usable)
    opts = {"n_boot": n_boot, "seed": seed}
    if n == 0:
        return {"n_groups": 0}
    width = max(len(d) for _, d in usable)
    table = np.full((n, width), np.nan)
    for row, (_, deviations) in enumerate(usable):
        table[row, : len(deviations)] = deviations
    first_last = np.array([d[0] - d[-1] for _, d in usable])
    changed = np.array([float(v.top_changed) for v, _ in usable])
    spread = np.array([v.disagreement if v.disagreement is not None else np.nan for v, _ in usable])

    def mean_of(values: np.ndarray):
        return lambda idx: float(np.nanmean(values[idx])) if np.isfinite(values[idx]).any() else float("nan")

    return {
        "n_groups": n,
        "slot_deviation": [bootstrap(mean_of(table[:, s]), n, **opts).model_dump() for s in range(width)],
        "first_minus_last": bootstrap(mean_of(first_last), n, **opts).model_dump(),
        "top_changed_rate": bootstrap(mean_of(changed), n, **opts).model_dump(),
        "disagreement": bootstrap(mean_of(spread), n, **opts).model_dump(),
    }
