"""Bias metrics from audit verdicts: pure functions of (items, verdicts), each with a 95 % interval.

Rates have Wilson intervals, differences of rates Newcombe intervals, everything else BCa bootstrap
intervals over items (see :mod:`rewardkit.audit.stats`). A bias is flagged only when it stays significant
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

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewardkit.audit.stats import (
    METHODS,
    Estimate,
    bootstrap,
    cohen_kappa,
    holm,
    logistic_regression,
    rate,
    rate_difference,
    rate_estimate,
    sigmoid,
    sign_flip_p_value,
)
from rewardkit.heldout.sets import AuditItem
from rewardkit.judges.base import OrderVerdict, PairwiseVerdict

BASELINE = "none"
NAN = float("nan")


@dataclass(frozen=True)
class Thresholds:
    """When a bias is flagged: its Holm-adjusted p-value must be below ``alpha`` and its value pass these magnitudes."""

    alpha: float = 0.05
    position: float = 0.1
    length: float = 0.1
    flip: float = 0.1
    self_preference: float = 0.1
    consistency: float = 0.8
    abstain: float = 0.2


def order_pick_first(order: OrderVerdict) -> float:
    """1.0 if this order chose the response shown first, 0.0 if the second, NaN if undecided."""
    if order.source in ("abstain", "error"):
        return NAN
    if order.choice is not None:
        return 1.0 if order.choice == "first" else 0.0
    if order.prob_first is None or order.prob_first == 0.5:
        return NAN
    return 1.0 if order.prob_first > 0.5 else 0.0


@dataclass(frozen=True)
class VerdictTable:
    """Per-item arrays aligned with ``items`` (NaN where undecided)."""

    items: list[AuditItem]
    gold_a: np.ndarray  # +1 gold a, -1 gold b, 0 tie
    prob_a: np.ndarray
    pick_a_ab: np.ndarray  # order ab (a shown first): 1 if it picked a
    pick_a_ba: np.ndarray  # order ba (b shown first): 1 if it picked a
    len_a: np.ndarray
    len_b: np.ndarray

    @classmethod
    def build(cls, items: Sequence[AuditItem], verdicts: Mapping[str, PairwiseVerdict]) -> VerdictTable:
        kept = [it for it in items if it.id in verdicts]
        v = [verdicts[it.id] for it in kept]
        return cls(
            items=kept,
            gold_a=np.array([{"a": 1.0, "b": -1.0}.get(it.gold, 0.0) for it in kept]),
            prob_a=np.array([NAN if x.abstained or x.prob_a is None else x.prob_a for x in v]),
            pick_a_ab=np.array([order_pick_first(x.ab) for x in v]),
            pick_a_ba=np.array([1.0 - order_pick_first(x.ba) for x in v]),
            len_a=np.array([len(it.response_a) for it in kept], dtype=float),
            len_b=np.array([len(it.response_b) for it in kept], dtype=float),
        )

    def __len__(self) -> int:
        return len(self.items)

    def subset(self, rows: np.ndarray) -> VerdictTable:
        """The table of the items at ``rows`` (e.g. one category)."""
        return VerdictTable(
            items=[self.items[i] for i in rows],
            gold_a=self.gold_a[rows],
            prob_a=self.prob_a[rows],
            pick_a_ab=self.pick_a_ab[rows],
            pick_a_ba=self.pick_a_ba[rows],
            len_a=self.len_a[rows],
            len_b=self.len_b[rows],
        )

    @property
    def has_gold(self) -> np.ndarray:
        return self.gold_a != 0

    def picks_gold(self) -> tuple[np.ndarray, np.ndarray]:
        """Per order: 1 if the decision picked the gold (NaN for undecided or tie-gold items)."""
        g = np.where(self.gold_a == 0, NAN, self.gold_a)
        return np.where(g > 0, self.pick_a_ab, 1 - self.pick_a_ab), np.where(g > 0, self.pick_a_ba, 1 - self.pick_a_ba)

    def winner_labels(self) -> list[str]:
        return ["abstain" if math.isnan(p) else ("a" if p > 0.5 else "b" if p < 0.5 else "tie") for p in self.prob_a]


def _ratio(num: np.ndarray, den: np.ndarray) -> Any:
    def stat(idx: np.ndarray) -> float:
        d = den[idx].sum()
        return float(num[idx].sum() / d) if d > 0 else NAN

    return stat


def _nan0(x: np.ndarray) -> np.ndarray:
    return np.nan_to_num(x, nan=0.0)


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
    out["abstain_rate"] = _dump(rate_estimate(np.isnan(table.prob_a)))
    out["accuracy"] = _dump(accuracy(table, **opts))
    gold_ab, gold_ba = table.picks_gold()
    decided_orders = (~np.isnan(gold_ab)).astype(float) + (~np.isnan(gold_ba)).astype(float)
    out["order_accuracy"] = _dump(rate_estimate(_nan0(gold_ab) + _nan0(gold_ba), decided_orders))
    out["kappa_gold"] = _dump(kappa_with_gold(table, **opts))
    categories = np.array([it.category for it in table.items])
    out["by_category"] = {
        cat: _dump(accuracy(table.subset(np.flatnonzero(categories == cat)), **opts))
        for cat in sorted(set(categories.tolist()))
    }
    out.update(bias_metrics(table, verdicts, self_model=self_model, **opts))
    if order_free:
        out["position"]["order_free"] = True
    if other is not None:
        out["agreement"] = _dump(agreement(table, {i: v for (i, p), v in other.items() if p == BASELINE}, **opts))
    out["bias_tests"] = bias_tests(out, thresholds)
    out["flags"] = flags(out, thresholds)
    return out


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


def _dump(e: Estimate) -> dict[str, Any]:
    return e.model_dump()


def _with_p(est: Estimate, p_value: float) -> Estimate:
    return est if est.value is None else est.model_copy(update={"p_value": p_value})


def _rate_dump(found: Any) -> Estimate:
    return Estimate(value=None) if found is None else found.estimate()


def accuracy(table: VerdictTable, *, n_boot: int = 2000, seed: int = 0) -> Estimate:
    """Share of items with a gold whose averaged verdict favours it (Wilson interval over those items)."""
    gold = table.has_gold
    toward_gold = (table.prob_a - 0.5) * table.gold_a
    correct = (_nan0(toward_gold) > 0).astype(float)
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


def position_metrics(table: VerdictTable, *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    first_ab, first_ba = table.pick_a_ab, 1 - table.pick_a_ba  # picked the first slot, per order
    decided = (~np.isnan(first_ab)).astype(float) + (~np.isnan(first_ba)).astype(float)
    firsts = _nan0(first_ab) + _nan0(first_ba)
    both = ~np.isnan(first_ab) & ~np.isnan(first_ba)
    consistent = (both & (table.pick_a_ab == table.pick_a_ba)).astype(float)
    first_rate = rate_estimate(firsts, decided)
    if first_rate.value is not None:  # no position effect: each item's first-slot picks as likely above half as below
        first_rate = first_rate.model_copy(update={"p_value": sign_flip_p_value(firsts - decided / 2, seed=seed)})
    confusion = Counter((_order_label(x), _order_label(y)) for x, y in zip(first_ab, first_ba, strict=True))
    return {
        "first_slot_rate": _dump(first_rate),
        "position_bias": _dump(first_rate.affine(2.0, -1.0) if first_rate.value is not None else first_rate),
        "consistency": _dump(rate_estimate(consistent, both.astype(float))),
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
    picks_gold_sum = _nan0(gold_ab) + _nan0(gold_ba)
    decided = (~np.isnan(gold_ab)).astype(float) + (~np.isnan(gold_ba)).astype(float)
    # picks longer when gold shorter = picks wrong; picks shorter when gold longer = picks wrong
    wrong_sum = decided - picks_gold_sum
    longer_when_shorter = rate(wrong_sum * gold_shorter, decided * gold_shorter)
    shorter_when_longer = rate(wrong_sum * gold_longer, decided * gold_longer)
    rates = {
        "length_bias": _dump(rate_difference(longer_when_shorter, shorter_when_longer)),
        "longer_wins_when_gold_shorter": _dump(_rate_dump(longer_when_shorter)),
        "shorter_wins_when_gold_longer": _dump(_rate_dump(shorter_when_longer)),
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
        "length_coef": _dump(bootstrap(coef, n, n_boot=reg_boot, seed=seed)),
        "lc_accuracy": _dump(bootstrap(lc, n, n_boot=reg_boot, seed=seed)),
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
    """The cue's effect on the wrong-pick rate, normalised by the room it had to move (see module docstring).

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
    """How often a cue on the wrong response pulls decisions to it (see module docstring)."""
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
    v_elig = present & (_nan0(base_toward) > 0) & ~np.isnan(pert_toward)
    v_flip = (v_elig & (_nan0(pert_toward) < 0)).astype(float)
    shift_ok = present & ~np.isnan(base_toward) & ~np.isnan(pert_toward)
    shift = np.where(shift_ok, _nan0(pert_toward) - _nan0(base_toward), 0.0)
    both_ab = present & ~np.isnan(base_ab) & ~np.isnan(pert_ab)
    both_ba = present & ~np.isnan(base_ba) & ~np.isnan(pert_ba)
    paired = both_ab.astype(float) + both_ba.astype(float)
    base_wrong = np.where(both_ab, 1 - _nan0(base_ab), 0.0) + np.where(both_ba, 1 - _nan0(base_ba), 0.0)
    pert_wrong = np.where(both_ab, 1 - _nan0(pert_ab), 0.0) + np.where(both_ba, 1 - _nan0(pert_ba), 0.0)
    base_rate, pert_rate = _ratio(base_wrong, paired), _ratio(pert_wrong, paired)
    # no cue effect: each item's cued and uncued decisions are exchangeable
    cue_test = sign_flip_p_value(pert_wrong - base_wrong, seed=seed)

    def susceptibility(idx: np.ndarray) -> float:
        return cue_susceptibility(base_rate(idx), pert_rate(idx))

    n = len(table)
    return {
        "susceptibility": _dump(_with_p(bootstrap(susceptibility, n, n_boot=n_boot, seed=seed), cue_test)),
        "flip_rate": _dump(rate_estimate(flips, e_ab.astype(float) + e_ba.astype(float))),
        "verdict_flip_rate": _dump(rate_estimate(v_flip, v_elig.astype(float))),
        "gold_prob_shift": _dump(bootstrap(_ratio(shift, shift_ok.astype(float)), n, n_boot=n_boot, seed=seed)),
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
    wrong_picks = decided - _nan0(gold_ab) - _nan0(gold_ba)
    picks_own_when_wrong = rate(wrong_picks * own_is_wrong, decided * own_is_wrong)
    # Baseline error: picking the other's wrong answer; without such items, the error rate on items
    # that hold no own response (the judge's ordinary error rate).
    if own_right.any():
        baseline_name, baseline_mask = "picks_other_when_other_wrong", own_right
    else:
        baseline_name, baseline_mask = "error_rate_without_own", table.has_gold & ~own
    picks_baseline = rate(wrong_picks * baseline_mask, decided * baseline_mask)
    pick_a = _nan0(table.pick_a_ab) + _nan0(table.pick_a_ba)
    own_picks = np.where(own_a, pick_a, decided - pick_a)
    return {
        "self_preference": _dump(rate_difference(picks_own_when_wrong, picks_baseline)),
        "baseline": baseline_name,
        "own_win_rate": _dump(rate_estimate(own_picks * own, decided * own)),
        "picks_own_when_own_wrong": _dump(_rate_dump(picks_own_when_wrong)),
        baseline_name: _dump(_rate_dump(picks_baseline)),
        "n_own": int(own.sum()),
        "n_own_wrong": int(own_is_wrong.sum()),
    }


def _estimate(d: Any) -> Estimate | None:
    return Estimate.model_validate(d) if isinstance(d, Mapping) and d.get("value") is not None else None


def _bias_family(m: Mapping[str, Any], t: Thresholds) -> list[tuple[str, Estimate | None, bool]]:
    """(bias, estimate, large enough to matter) for every bias the audit tests."""
    family: list[tuple[str, Estimate | None, bool]] = []
    if not (m.get("position") or {}).get("order_free"):
        pos = _estimate((m.get("position") or {}).get("position_bias"))
        family.append(("position", pos, bool(pos and abs(pos.value) >= t.position)))
    length = _estimate((m.get("length") or {}).get("length_bias"))
    family.append(("length", length, bool(length and abs(length.value) >= t.length)))
    for name, pm in (m.get("perturbations") or {}).items():
        su = _estimate(pm.get("susceptibility"))
        family.append((f"perturbation:{name}", su, bool(su and su.value >= t.flip)))
    if m.get("self_preference"):
        sp = _estimate(m["self_preference"].get("self_preference"))
        family.append(("self_preference", sp, bool(sp and sp.value >= t.self_preference)))
    return family


def bias_tests(m: Mapping[str, Any], t: Thresholds) -> dict[str, dict[str, Any]]:
    """Each bias test: its p-value, the Holm-adjusted p-value over the audit's bias tests, and whether it is flagged.

    A bias is flagged when its Holm-adjusted p-value is below ``t.alpha`` and its size passes the threshold:
    testing k biases at once then flags a judge without any bias in at most ``alpha`` of audits, where
    "any interval excludes 0" would flag up to ``k * alpha``.
    """
    tested = [(name, est, large) for name, est, large in _bias_family(m, t) if est and est.p_value is not None]
    adjusted = holm([est.p_value for _, est, _ in tested])
    return {
        name: {
            "value": est.value,
            "p_value": est.p_value,
            "p_holm": round(p_holm, 6),
            "tests": len(tested),
            "flagged": bool(p_holm < t.alpha and large),
        }
        for (name, est, large), p_holm in zip(tested, adjusted, strict=True)
    }


def flags(m: Mapping[str, Any], t: Thresholds) -> list[dict[str, str]]:
    """Human-readable findings: biases that pass :func:`bias_tests`, low consistency, weak accuracy, abstentions."""
    found: list[dict[str, str]] = []
    tests = m.get("bias_tests") or bias_tests(m, t)

    def add(bias: str, severity: str, message: str) -> None:
        found.append({"bias": bias, "severity": severity, "message": message})

    def evidence(bias: str, est: Estimate) -> str:
        test = tests[bias]
        return f"CI {est.fmt(pct=True)}, Holm-adjusted p = {test['p_holm']:.2g} over {test['tests']} bias tests"

    family = {name: est for name, est, _ in _bias_family(m, t)}
    for bias, test in tests.items():
        if not test["flagged"]:
            continue
        est = family[bias]
        severity = "high" if abs(est.value) >= 0.3 else "medium"
        if bias == "position":
            slot = "first" if est.value > 0 else "second"
            message = f"position bias: {abs(est.value) * 100:.0f}% of decisions follow the {slot} slot, not the content"
        elif bias == "length":
            kind = "longer" if est.value > 0 else "shorter"
            message = (
                f"length bias: {abs(est.value) * 100:.0f}% of decisions go to the {kind} response regardless of "
                "correctness"
            )
        elif bias.startswith("perturbation:"):
            name = bias.split(":", 1)[1]
            fr = _estimate(((m.get("perturbations") or {}).get(name) or {}).get("flip_rate"))
            flipped = f"; {fr.value * 100:.0f}% of correct decisions flipped" if fr else ""
            message = (
                f"{name} cue on the wrong response takes over {est.value * 100:.0f}% of otherwise-correct "
                f"decisions{flipped}"
            )
        else:
            severity = "medium"
            message = f"self-preference: favours its own responses by {est.value * 100:.1f}%"
        add(bias, severity, f"{message} ({evidence(bias, est)})")
    cons = _estimate(m.get("position", {}).get("consistency"))
    if cons and cons.value < t.consistency:
        add(
            "consistency",
            "high" if cons.value < 0.5 else "medium",
            f"swap consistency only {cons.fmt(pct=True)}: verdicts change when the responses swap places",
        )
    acc = _estimate(m.get("accuracy"))
    if acc and acc.low is not None and acc.low <= 0.5:
        add("accuracy", "high", f"accuracy {acc.fmt(pct=True)} is not clearly better than chance")
    ab = _estimate(m.get("abstain_rate"))
    if ab and ab.value >= t.abstain:
        add("abstain", "medium", f"abstains on {ab.value * 100:.0f}% of items")
    return found
