"""Bias metrics from audit verdicts: pure functions of (items, verdicts), each with a 95 % interval.

Rates have Wilson intervals, differences of rates Newcombe intervals, everything else BCa bootstrap
intervals over items (see :mod:`rewardsmith.audit.stats`). A bias is flagged only when it stays significant
after Holm's correction across all the bias tests of the audit (position, length, each cue, self-preference)
and is large enough to matter (:class:`Thresholds`), so a no-bias judge is flagged in at most 5 % of audits.

Definitions (d = one presentation order's decision; every item is judged in both orders):

* ``accuracy`` — JudgeBench style: an item is correct only if the both-order average ``prob_a``
  favours the gold; ties and abstentions count as wrong. ``order_accuracy``: share of single-order
  decisions that pick the gold.
* ``position_bias`` = 2·P(d picks the first slot) − 1: the share of decisions made by slot rather
  than content (both orders see each pair, so content is balanced across slots). 0 = none.
* ``consistency`` — share of items whose two orders pick the same response (MT-Bench swap test).
* ``length_bias`` = P(d picks the longer | gold is shorter) − P(d picks the shorter | gold is longer):
  the share of decisions made by length. 0 = none, negative = prefers shorter.
* ``length_coef`` / ``lc_accuracy`` — logistic regression of "d picks gold" on the standardized length
  difference (gold − wrong) and the gold's slot (±1); ``lc_accuracy`` is the mean prediction with the
  length difference set to 0 (AlpacaEval's length control).
* perturbation ``flip_rate`` — among orders that picked the gold unperturbed, the share that pick the
  wrong response once it carries the cue (CALM); ``verdict_flip_rate`` is the same on averaged verdicts.
  ``susceptibility`` = (P_cue(wrong) − P(wrong)) / (1 − P(wrong)) when the cue adds wrong decisions: the
  share of otherwise-correct decisions the cue takes over, net of the judge's ordinary errors; and
  (P_cue(wrong) − P(wrong)) / P(wrong) when it removes them: minus the share of the judge's ordinary errors
  the cue corrects (the cue repels). Always within [−1, 1], 0 = the cue changes nothing. (Dividing a decrease by
  1 − P(wrong) as well would read −300 % for a judge wrong in 3 of 4 decisions whose errors the cue all undid.)
* ``self_preference`` = P(d picks own | own is wrong) − P(d picks other | other is wrong); when the
  judge never wrote the right answer, the second term is its error rate on items without its own text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rewardsmith.audit.biases import (
    bias_metrics,
    cue_susceptibility,
    length_metrics,
    perturbation_metrics,
    position_metrics,
    self_preference,
)
from rewardsmith.audit.flags import Thresholds, bias_tests, flags
from rewardsmith.audit.stats import METHODS, Estimate, bootstrap, cohen_kappa, rate_estimate
from rewardsmith.audit.table import BASELINE, NAN, VerdictTable, dump, nan0, order_pick_first
from rewardsmith.heldout.sets import AuditItem
from rewardsmith.judges.base import PairwiseVerdict

# The bias statistics, the flags and the table are importable from here, the audit's front module.
__all__ = [
    "BASELINE",
    "Thresholds",
    "VerdictTable",
    "accuracy",
    "agreement",
    "bias_metrics",
    "bias_tests",
    "compute_metrics",
    "cue_susceptibility",
    "flags",
    "kappa_with_gold",
    "length_metrics",
    "order_pick_first",
    "perturbation_metrics",
    "position_metrics",
    "self_preference",
]


def compute_metrics(
    items: Sequence[AuditItem],
    verdicts: Mapping[tuple[str, str], PairwiseVerdict],
    *,
    self_model: str | None = None,
    other: Mapping[tuple[str, str], PairwiseVerdict] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    thresholds: Thresholds | None = None,
    order_free: bool = False,
) -> dict[str, Any]:
    """Every audit metric as a JSON-ready dict. ``verdicts`` is keyed by ``(item_id, perturbation)``.

    ``order_free``: the judge scores each response alone (a reward model), so its position bias is zero by
    construction; ``position.order_free`` says so and position is left out of the bias tests, where its p-value
    of 1 would only weaken Holm's correction for the biases that can exist.
    """
    thresholds = thresholds or Thresholds()
    baseline = {iid: v for (iid, p), v in verdicts.items() if p == BASELINE}
    table = VerdictTable.build(items, baseline)
    n = len(table)
    opts = {"n_boot": n_boot, "seed": seed}
    out: dict[str, Any] = {"n_items": len(items), "n_judged": n}
    if n == 0:
        out["flags"] = []
        return out

    out["intervals"] = dict(METHODS)
    out["abstain_rate"] = dump(rate_estimate(np.isnan(table.prob_a)))
    out["accuracy"] = dump(accuracy(table, **opts))
    gold_ab, gold_ba = table.picks_gold()
    decided_orders = (~np.isnan(gold_ab)).astype(float) + (~np.isnan(gold_ba)).astype(float)
    out["order_accuracy"] = dump(rate_estimate(nan0(gold_ab) + nan0(gold_ba), decided_orders))
    out["kappa_gold"] = dump(kappa_with_gold(table, **opts))
    categories = np.array([it.category for it in table.items])
    out["by_category"] = {
        cat: dump(accuracy(table.subset(np.flatnonzero(categories == cat)), **opts))
        for cat in sorted(set(categories.tolist()))
    }
    out.update(bias_metrics(table, verdicts, self_model=self_model, n_boot=n_boot, seed=seed))
    if order_free:
        out["position"]["order_free"] = True
    if other is not None:
        out["agreement"] = dump(agreement(table, {i: v for (i, p), v in other.items() if p == BASELINE}, **opts))
    out["bias_tests"] = bias_tests(out, thresholds)
    out["flags"] = flags(out, thresholds)
    return out


def accuracy(table: VerdictTable, *, n_boot: int = 2000, seed: int = 0) -> Estimate:
    """Share of items with a gold whose averaged verdict favours it (Wilson interval over those items)."""
    gold = table.has_gold
    toward_gold = (table.prob_a - 0.5) * table.gold_a
    correct = (nan0(toward_gold) > 0).astype(float)
    return rate_estimate(correct, gold.astype(float))


def kappa_with_gold(table: VerdictTable, *, n_boot: int = 2000, seed: int = 0) -> Estimate:
    labels = np.array(table.winner_labels())
    gold = np.array([it.gold for it in table.items])
    decided = labels != "abstain"

    def stat(idx: np.ndarray) -> float:
        idx = idx[decided[idx]]
        return cohen_kappa(list(labels[idx]), list(gold[idx])) if idx.size else NAN

    return bootstrap(stat, len(table), n_boot=n_boot, seed=seed)


def agreement(
    table: VerdictTable, other: Mapping[str, PairwiseVerdict], *, n_boot: int = 2000, seed: int = 0
) -> Estimate:
    """Cohen's kappa between this judge's and another judge's winners on the items both decided."""
    mine = dict(zip((it.id for it in table.items), table.winner_labels(), strict=True))
    theirs = VerdictTable.build(table.items, other)
    pairs = [
        (mine[it.id], lab)
        for it, lab in zip(theirs.items, theirs.winner_labels(), strict=True)
        if lab != "abstain" and mine[it.id] != "abstain"
    ]
    first = np.array([a for a, _ in pairs])
    second = np.array([b for _, b in pairs])
    return bootstrap(lambda i: cohen_kappa(list(first[i]), list(second[i])), len(pairs), n_boot=n_boot, seed=seed)
