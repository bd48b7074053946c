"""Bias statistics of an audit: position, length, cue perturbations, self-preference.

Definitions and their intervals are in :mod:`rewardsmith.audit.metrics`; :mod:`rewardsmith.audit.flags` tests them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from rewardsmith.audit.stats import (
    bootstrap,
    logistic_regression,
    rate,
    rate_difference,
    rate_estimate,
    sigmoid,
    sign_flip_p_value,
)
from rewardsmith.audit.table import BASELINE, NAN, VerdictTable, dump, nan0, rate_dump, ratio, with_p
from rewardsmith.judges.base import PairwiseVerdict


def bias_metrics(
    table: VerdictTable,
    verdicts: Mapping[tuple[str, str], PairwiseVerdict],
    *,
    self_model: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    regression: bool = True,
) -> dict[str, Any]:
    """The sections :func:`bias_tests` reads: ``position``, ``length``, ``perturbations``, ``self_preference``."""
    opts = {"n_boot": n_boot, "seed": seed}
    return {
        "position": position_metrics(table, **opts),
        "length": length_metrics(table, **opts, regression=regression),
        "perturbations": {
            name: perturbation_metrics(table, {iid: v for (iid, p), v in verdicts.items() if p == name}, **opts)
            for name in sorted({p for (_, p) in verdicts if p != BASELINE})
        },
        "self_preference": self_preference(table, self_model, **opts) if self_model else None,
    }


def position_metrics(table: VerdictTable, *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    first_ab, first_ba = table.pick_a_ab, 1 - table.pick_a_ba  # picked the first slot, per order
    decided = (~np.isnan(first_ab)).astype(float) + (~np.isnan(first_ba)).astype(float)
    firsts = nan0(first_ab) + nan0(first_ba)
    both = ~np.isnan(first_ab) & ~np.isnan(first_ba)
    consistent = (both & (table.pick_a_ab == table.pick_a_ba)).astype(float)
    first_rate = rate_estimate(firsts, decided)
    if first_rate.value is not None:  # no position effect: each item's first-slot picks as likely above half as below
        first_rate = first_rate.model_copy(update={"p_value": sign_flip_p_value(firsts - decided / 2, seed=seed)})
    confusion = Counter((_order_label(x), _order_label(y)) for x, y in zip(first_ab, first_ba, strict=True))
    return {
        "first_slot_rate": dump(first_rate),
        "position_bias": dump(first_rate.affine(2.0, -1.0) if first_rate.value is not None else first_rate),
        "consistency": dump(rate_estimate(consistent, both.astype(float))),
        "confusion": {f"{a}|{b}": c for (a, b), c in sorted(confusion.items())},
    }


def _order_label(x: float) -> str:
    return "abstain" if math.isnan(x) else ("first" if x == 1.0 else "second")


def length_metrics(
    table: VerdictTable, *, n_boot: int = 2000, seed: int = 0, n_bins: int = 5, regression: bool = True
) -> dict[str, Any]:
    """Length preference from per-order decisions on items with a gold and unequal lengths.

    ``regression=False`` leaves out the logistic fit and its bootstrap (the length bias test does not need them).
    """
    gold_a = table.gold_a
    len_gold = np.where(gold_a > 0, table.len_a, table.len_b)
    len_wrong = np.where(gold_a > 0, table.len_b, table.len_a)
    diff = len_gold - len_wrong
    usable = table.has_gold & (diff != 0)
    gold_ab, gold_ba = table.picks_gold()
    n = len(table)
    if not usable.any():
        return {"length_bias": None, "length_coef": None, "lc_accuracy": None, "bins": []}
    gold_longer = usable & (diff > 0)
    gold_shorter = usable & (diff < 0)
    picks_gold_sum = nan0(gold_ab) + nan0(gold_ba)
    decided = (~np.isnan(gold_ab)).astype(float) + (~np.isnan(gold_ba)).astype(float)
    # picks longer when gold shorter = picks wrong; picks shorter when gold longer = picks wrong
    wrong_sum = decided - picks_gold_sum
    longer_when_shorter = rate(wrong_sum * gold_shorter, decided * gold_shorter)
    shorter_when_longer = rate(wrong_sum * gold_longer, decided * gold_longer)
    rates = {
        "length_bias": dump(rate_difference(longer_when_shorter, shorter_when_longer)),
        "longer_wins_when_gold_shorter": dump(rate_dump(longer_when_shorter)),
        "shorter_wins_when_gold_longer": dump(rate_dump(shorter_when_longer)),
    }
    if not regression:
        return rates

    scale = float(np.std(diff[usable])) or 1.0
    z = diff / scale
    # One observation per decided order: (intercept, z, gold-slot sign) -> picked gold.
    obs_z = np.concatenate([z, z])
    obs_slot = np.concatenate([gold_a, -gold_a])  # +1 when the gold is shown first
    obs_y = np.concatenate([gold_ab, gold_ba])
    obs_ok = np.concatenate([usable, usable]) & ~np.isnan(obs_y)

    fits: dict[bytes, np.ndarray | None] = {}  # the coefficient and lc bootstraps resample the same indices

    def fit(idx: np.ndarray) -> np.ndarray | None:
        key = idx.tobytes()
        if key not in fits:
            fits[key] = _fit(idx)
        return fits[key]

    def _fit(idx: np.ndarray) -> np.ndarray | None:
        rows = np.concatenate([idx, idx + n])
        rows = rows[obs_ok[rows]]
        if rows.size < 4:
            return None
        x = np.column_stack([np.ones(rows.size), obs_z[rows], obs_slot[rows]])
        beta = logistic_regression(x, obs_y[rows], l2=1e-3)
        lc = float(np.mean(sigmoid(beta[0] + beta[2] * obs_slot[rows])))
        return np.array([beta[1], lc, beta[0], beta[2]])

    def coef(idx: np.ndarray) -> float:
        r = fit(idx)
        return NAN if r is None else float(r[0])

    def lc(idx: np.ndarray) -> float:
        r = fit(idx)
        return NAN if r is None else float(r[1])

    reg_boot = max(200, n_boot // 4)  # each replicate refits the regression
    full = fit(np.arange(n))
    return {
        "fit": None
        if full is None
        else {"intercept": float(full[2]), "length": float(full[0]), "gold_first": float(full[3])},
        **rates,
        "length_coef": dump(bootstrap(coef, n, n_boot=reg_boot, seed=seed)),
        "lc_accuracy": dump(bootstrap(lc, n, n_boot=reg_boot, seed=seed)),
        "length_scale_chars": scale,
        "bins": _length_bins(obs_z[obs_ok], obs_y[obs_ok], scale, n_bins),
    }


def _length_bins(z: np.ndarray, y: np.ndarray, scale: float, n_bins: int) -> list[dict[str, float]]:
    """P(order picks gold) in quantile bins of the length difference (for the plot)."""
    if z.size == 0:
        return []
    edges = np.unique(np.quantile(z, np.linspace(0, 1, n_bins + 1)))
    bins = []
    for k in range(max(1, edges.size - 1)):
        lo, hi = (edges[k], edges[k + 1]) if edges.size > 1 else (edges[0], edges[0])
        sel = (z >= lo) & ((z <= hi) if k == edges.size - 2 or edges.size == 1 else (z < hi))
        if sel.any():
            bins.append(
                {"diff_chars": float(z[sel].mean() * scale), "gold_win_rate": float(y[sel].mean()), "n": int(sel.sum())}
            )
    return bins


def cue_susceptibility(base_wrong: float, cued_wrong: float) -> float:
    """The cue's effect on the wrong-pick rate, normalised by the room it had to move.

    See :mod:`rewardsmith.audit.metrics`.

    >>> cue_susceptibility(0.25, 0.625), cue_susceptibility(0.75, 0.0), cue_susceptibility(0.4, 0.4)
    (0.5, -1.0, 0.0)
    """
    if math.isnan(base_wrong) or math.isnan(cued_wrong):
        return NAN
    change = cued_wrong - base_wrong
    if change > 0:
        return change / (1.0 - base_wrong)  # > 0 only when base_wrong < 1
    if change < 0:
        return change / base_wrong  # < 0 only when base_wrong > 0
    return 0.0


def perturbation_metrics(
    table: VerdictTable, perturbed: Mapping[str, PairwiseVerdict], *, n_boot: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """How often a cue on the wrong response pulls decisions to it (see :mod:`rewardsmith.audit.metrics`)."""
    pt = VerdictTable.build(table.items, perturbed)
    pos = {it.id: k for k, it in enumerate(pt.items)}
    idx_map = np.array([pos.get(it.id, -1) for it in table.items])
    present = (idx_map >= 0) & table.has_gold

    def aligned(arr: np.ndarray) -> np.ndarray:
        return np.where(present, arr[np.clip(idx_map, 0, None)] if arr.size else NAN, NAN)

    base_ab, base_ba = table.picks_gold()
    pert_ab_raw, pert_ba_raw = pt.picks_gold()
    pert_ab, pert_ba = aligned(pert_ab_raw), aligned(pert_ba_raw)
    eligible = lambda b, p: (b == 1.0) & ~np.isnan(p)  # noqa: E731
    e_ab, e_ba = eligible(base_ab, pert_ab), eligible(base_ba, pert_ba)
    flips = (e_ab & (pert_ab == 0.0)).astype(float) + (e_ba & (pert_ba == 0.0)).astype(float)
    base_toward = (table.prob_a - 0.5) * table.gold_a
    pert_toward = (aligned(pt.prob_a) - 0.5) * table.gold_a
    v_elig = present & (nan0(base_toward) > 0) & ~np.isnan(pert_toward)
    v_flip = (v_elig & (nan0(pert_toward) < 0)).astype(float)
    shift_ok = present & ~np.isnan(base_toward) & ~np.isnan(pert_toward)
    shift = np.where(shift_ok, nan0(pert_toward) - nan0(base_toward), 0.0)
    both_ab = present & ~np.isnan(base_ab) & ~np.isnan(pert_ab)
    both_ba = present & ~np.isnan(base_ba) & ~np.isnan(pert_ba)
    paired = both_ab.astype(float) + both_ba.astype(float)
    base_wrong = np.where(both_ab, 1 - nan0(base_ab), 0.0) + np.where(both_ba, 1 - nan0(base_ba), 0.0)
    pert_wrong = np.where(both_ab, 1 - nan0(pert_ab), 0.0) + np.where(both_ba, 1 - nan0(pert_ba), 0.0)
    base_rate, pert_rate = ratio(base_wrong, paired), ratio(pert_wrong, paired)
    # no cue effect: each item's cued and uncued decisions are exchangeable
    cue_test = sign_flip_p_value(pert_wrong - base_wrong, seed=seed)

    def susceptibility(idx: np.ndarray) -> float:
        return cue_susceptibility(base_rate(idx), pert_rate(idx))

    n = len(table)
    return {
        "susceptibility": dump(with_p(bootstrap(susceptibility, n, n_boot=n_boot, seed=seed), cue_test)),
        "flip_rate": dump(rate_estimate(flips, e_ab.astype(float) + e_ba.astype(float))),
        "verdict_flip_rate": dump(rate_estimate(v_flip, v_elig.astype(float))),
        "gold_prob_shift": dump(bootstrap(ratio(shift, shift_ok.astype(float)), n, n_boot=n_boot, seed=seed)),
        "n_perturbed": int(present.sum()),
    }


def self_preference(table: VerdictTable, self_model: str, *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Does the judge favour responses it wrote? Needs items whose ``author_a``/``author_b`` is ``self_model``."""
    own_a = np.array([it.author_a == self_model and it.author_b != self_model for it in table.items])
    own_b = np.array([it.author_b == self_model and it.author_a != self_model for it in table.items])
    own = own_a | own_b
    if not own.any():
        return {"self_preference": None, "n_own": 0, "reason": f"no item has a response authored by {self_model!r}"}
    gold_ab, gold_ba = table.picks_gold()
    own_is_gold = (own_a & (table.gold_a > 0)) | (own_b & (table.gold_a < 0))
    own_is_wrong = own & table.has_gold & ~own_is_gold
    own_right = own & own_is_gold
    decided = (~np.isnan(gold_ab)).astype(float) + (~np.isnan(gold_ba)).astype(float)
    wrong_picks = decided - nan0(gold_ab) - nan0(gold_ba)
    picks_own_when_wrong = rate(wrong_picks * own_is_wrong, decided * own_is_wrong)
    # Baseline error: picking the other's wrong answer; without such items, the error rate on items
    # that hold no own response (the judge's ordinary error rate).
    if own_right.any():
        baseline_name, baseline_mask = "picks_other_when_other_wrong", own_right
    else:
        baseline_name, baseline_mask = "error_rate_without_own", table.has_gold & ~own
    picks_baseline = rate(wrong_picks * baseline_mask, decided * baseline_mask)
    pick_a = nan0(table.pick_a_ab) + nan0(table.pick_a_ba)
    own_picks = np.where(own_a, pick_a, decided - pick_a)
    return {
        "self_preference": dump(rate_difference(picks_own_when_wrong, picks_baseline)),
        "baseline": baseline_name,
        "own_win_rate": dump(rate_estimate(own_picks * own, decided * own)),
        "picks_own_when_own_wrong": dump(rate_dump(picks_own_when_wrong)),
        baseline_name: dump(rate_dump(picks_baseline)),
        "n_own": int(own.sum()),
        "n_own_wrong": int(own_is_wrong.sum()),
    }
