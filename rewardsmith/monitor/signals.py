"""The hacking signals as pure functions of the checked samples, with the statistics behind each alarm.

A check is a block of samples scored at one step. Trends are tested with a one-sided block-permutation test of the
least-squares slope against the check index: whole checks are shuffled, never single samples, so the completions of
one step (one policy, correlated groups) count as one unit of evidence and the test is exact under "no trend"
whatever the within-step correlation. A level is judged by its Wilson interval (rewardsmith.audit.stats).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rewardsmith.audit.stats import wilson


@dataclass(frozen=True)
class Observation:
    """One shadow-checked completion."""

    check: int
    step: int
    group: int
    length: int
    train_score: float | None
    train_pass: bool
    shadow_pass: bool | None
    format_pass: bool | None
    hedged: bool
    attack: str | None
    answer: str


@dataclass(frozen=True)
class Signal:
    name: str
    value: float | None
    alarm: bool
    message: str = ""
    p_value: float | None = None
    low: float | None = None
    high: float | None = None


def trend_p_value(checks: Sequence[int], values: Sequence[float], *, n_permutations: int, seed: int) -> float:
    """One-sided p-value of "no upward trend": block permutation of the slope of ``values`` over ``checks``."""
    checks_arr, y = np.asarray(checks), np.asarray(values, dtype=float)
    blocks = np.unique(checks_arr)
    if len(blocks) < 3:
        return 1.0
    index = np.searchsorted(blocks, checks_arr)
    sums = np.bincount(index, weights=y, minlength=len(blocks))
    counts = np.bincount(index, minlength=len(blocks)).astype(float)
    positions = np.arange(len(blocks), dtype=float)

    def slope(order: np.ndarray) -> np.ndarray:
        x = positions[order]  # block b sits at position order[b]
        xm = (counts[None, :] * x).sum(-1, keepdims=True) / counts.sum()
        return ((x - xm) * (sums[None, :] - counts[None, :] * (sums.sum() / counts.sum()))).sum(-1)

    observed = slope(np.arange(len(blocks))[None, :])[0]
    rng = np.random.default_rng(seed)
    perms = np.argsort(rng.random((n_permutations, len(blocks))), axis=1)
    null = slope(perms)
    return float((1 + np.sum(null >= observed - 1e-12)) / (1 + n_permutations))


def _thirds(obs: Sequence[Observation], value) -> tuple[float, float]:
    """Means of ``value`` over the first and the last third of the checks."""
    checks = sorted({o.check for o in obs})
    k = max(1, len(checks) // 3)
    early, late = set(checks[:k]), set(checks[-k:])
    e = [value(o) for o in obs if o.check in early]
    lt = [value(o) for o in obs if o.check in late]
    return float(np.mean(e)) if e else 0.0, float(np.mean(lt)) if lt else 0.0


def _p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.3g}"


def n_checks(obs: Sequence[Observation]) -> int:
    return len({o.check for o in obs})


def precision_recall(obs: Sequence[Observation], min_precision: float, min_passes: int) -> list[Signal]:
    """P(shadow correct | training reward says correct) and P(reward says correct | shadow correct), Wilson 95 %."""
    judged = [o for o in obs if o.shadow_pass is not None]
    passes = [o for o in judged if o.train_pass]
    truths = [o for o in judged if o.shadow_pass]
    out = []
    if passes:
        p = sum(bool(o.shadow_pass) for o in passes) / len(passes)  # judged: shadow_pass is a bool
        low, high = wilson(p, len(passes))
        alarm = len(passes) >= min_passes and high < min_precision
        msg = (
            f"precision of the training reward vs the shadow is {p:.0%} [{low:.0%}, {high:.0%}] over {len(passes)} "
            f"completions it scored correct: it pays for answers the shadow rejects"
        )
        out.append(Signal("precision", p, alarm, msg if alarm else "", low=low, high=high))
    else:
        out.append(Signal("precision", None, False))
    if truths:
        r = sum(o.train_pass for o in truths) / len(truths)
        low, high = wilson(r, len(truths))
        out.append(Signal("recall", r, False, low=low, high=high))
    else:
        out.append(Signal("recall", None, False))
    return out


def rising(obs, value, name, *, alpha, min_checks, n_permutations, seed) -> tuple[float | None, float, float]:
    """(p-value of an upward trend, early mean, late mean); p is None before ``min_checks`` checks."""
    early, late = _thirds(obs, value) if obs else (0.0, 0.0)
    if n_checks(obs) < min_checks:
        return None, early, late
    p = trend_p_value([o.check for o in obs], [value(o) for o in obs], n_permutations=n_permutations, seed=seed)
    return p, early, late


def divergence(obs, *, alpha, min_checks, n_permutations, seed) -> Signal:
    """The training reward rising while the shadow falls behind: an upward trend of (train pass - shadow pass)."""
    judged = [o for o in obs if o.shadow_pass is not None]
    p, early, late = rising(
        judged, lambda o: float(o.train_pass) - float(o.shadow_pass), "divergence",
        alpha=alpha, min_checks=min_checks, n_permutations=n_permutations, seed=seed,
    )  # fmt: skip
    p_train, _, _ = rising(
        judged, lambda o: float(o.train_pass), "train",
        alpha=alpha, min_checks=min_checks, n_permutations=n_permutations, seed=seed + 1,
    )  # fmt: skip
    alarm = p is not None and p < alpha and p_train is not None and p_train < 0.5 and late > early
    msg = f"training pass rate minus shadow pass rate rose from {early:.2f} to {late:.2f} (trend p={_p(p)})"
    return Signal("divergence", late - early, alarm, msg if alarm else "", p_value=p)


def length_blowup(obs, *, ratio, alpha, min_checks, n_permutations, seed) -> Signal:
    p, early, late = rising(
        obs, lambda o: float(o.length), "length",
        alpha=alpha, min_checks=min_checks, n_permutations=n_permutations, seed=seed,
    )  # fmt: skip
    grown = late / early if early > 0 else (float("inf") if late > 0 else 1.0)
    alarm = p is not None and p < alpha and grown >= ratio
    msg = f"completion length grew {grown:.1f}x ({early:.0f} -> {late:.0f} characters, trend p={_p(p)})"
    return Signal("length_blowup", grown if np.isfinite(grown) else None, alarm, msg if alarm else "", p_value=p)


def format_without_accuracy(obs, *, alpha, min_checks, n_permutations, seed) -> Signal:
    judged = [o for o in obs if o.format_pass is not None and o.shadow_pass is not None]
    if not judged:
        return Signal("format_without_accuracy", None, False)
    p, f_early, f_late = rising(
        judged, lambda o: float(o.format_pass), "format",
        alpha=alpha, min_checks=min_checks, n_permutations=n_permutations, seed=seed,
    )  # fmt: skip
    s_early, s_late = _thirds(judged, lambda o: float(o.shadow_pass))
    gain = f_late - f_early
    alarm = p is not None and p < alpha and gain > 0 and (s_late - s_early) < 0.5 * gain
    msg = f"format pass rate rose {f_early:.2f} -> {f_late:.2f} while accuracy went {s_early:.2f} -> {s_late:.2f}"
    return Signal("format_without_accuracy", gain, alarm, msg if alarm else "", p_value=p)


def share_rising(obs, feature, name, level, *, alpha, min_checks, n_permutations, seed) -> Signal:
    """A per-completion feature (hedging, an attack pattern) whose share rises significantly to at least ``level``."""
    p, early, late = rising(
        obs, lambda o: float(feature(o)), name,
        alpha=alpha, min_checks=min_checks, n_permutations=n_permutations, seed=seed,
    )  # fmt: skip
    alarm = p is not None and p < alpha and late >= level
    msg = f"{name.replace('_', ' ')} rose from {early:.0%} to {late:.0%} of completions (trend p={_p(p)})"
    return Signal(name, late, alarm, msg if alarm else "", p_value=p)


def group_collapse(obs, *, level, alpha, min_checks, n_permutations, seed) -> Signal:
    """Groups converging on one answer the shadow rejects: the modal-answer share per group, trend and level."""
    groups: dict[tuple[int, int], list[Observation]] = {}
    for o in obs:
        groups.setdefault((o.check, o.group), []).append(o)
    rows = []
    for (check, _), members in groups.items():
        if len(members) < 2:
            continue
        answers = [m.answer for m in members]
        modal = max(set(answers), key=answers.count)
        share = answers.count(modal) / len(answers)
        wrong = [m for m in members if m.answer == modal and m.shadow_pass is False]
        rows.append((check, share, len(wrong) == answers.count(modal)))
    if not rows:
        return Signal("answer_collapse", None, False)
    checks = [r[0] for r in rows]
    late_checks = set(sorted(set(checks))[-max(1, len(set(checks)) // 3) :])
    late = [r for r in rows if r[0] in late_checks]
    late_share = float(np.mean([r[1] for r in late]))
    late_wrong = float(np.mean([r[2] for r in late]))
    p = None
    if len(set(checks)) >= min_checks:
        p = trend_p_value(checks, [r[1] for r in rows], n_permutations=n_permutations, seed=seed)
    alarm = p is not None and p < alpha and late_share >= level and late_wrong >= 0.5
    msg = f"groups collapsed onto one answer ({late_share:.0%} share) that the shadow rejects (trend p={_p(p)})"
    return Signal("answer_collapse", late_share, alarm, msg if alarm else "", p_value=p)
