"""Which biases an audit flags: Holm's correction across its bias tests, magnitudes, readable findings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rewardsmith.audit.stats import Estimate, holm


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


class _Measured(Estimate):
    """An estimate with a value (the flags read only those)."""

    value: float


def _estimate(d: Any) -> _Measured | None:
    return _Measured.model_validate(d) if isinstance(d, Mapping) and d.get("value") is not None else None


def _bias_family(m: Mapping[str, Any], t: Thresholds) -> list[tuple[str, _Measured | None, bool]]:
    """(bias, estimate, large enough to matter) for every bias the audit tests."""
    family: list[tuple[str, _Measured | None, bool]] = []
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
    tested = [
        (name, est, large, est.p_value) for name, est, large in _bias_family(m, t) if est and est.p_value is not None
    ]
    adjusted = holm([p_value for *_, p_value in tested])
    return {
        name: {
            "value": est.value,
            "p_value": p_value,
            "p_holm": round(p_holm, 6),
            "tests": len(tested),
            "flagged": bool(p_holm < t.alpha and large),
        }
        for (name, est, large, p_value), p_holm in zip(tested, adjusted, strict=True)
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
        assert est is not None, f"bias test {bias!r} is flagged without an estimate"
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


def coverage_problem(m: Mapping[str, Any]) -> str | None:
    """The headline when the audit judged too little to say anything: nothing judged, or most tasks failed.

    An audit whose judge answered nothing has no verdicts, so no bias can be flagged; "no bias flagged" would
    then read as a clean bill of health for a judge that was never heard. ``None`` when the verdicts cover
    the audit (failures, if any, a minority).
    """
    info = m.get("run") or {}
    runs = info.get("runs") or [{}]
    latest = runs[-1] if isinstance(runs[-1], Mapping) else {}
    failed = int(info.get("failed_now") or 0)
    tasks = int(latest.get("tasks") or 0)
    errors = latest.get("errors") or []
    first = f"; first error: {errors[0]}" if errors else ""
    judged, items = int(m.get("n_judged") or 0), int(m.get("n_items") or 0)
    if judged == 0:
        why = f"{failed} of {tasks} judge tasks failed{first}" if failed else "the run holds no verdicts"
        return f"NOTHING JUDGED: no verdict for any of the {items} items ({why}); fix the judge and rerun"
    if tasks and failed * 2 > tasks:
        return (
            f"MOST OF THE AUDIT NOT JUDGED: {failed} of {tasks} judge tasks failed{first}; the findings rest on "
            f"{judged} of {items} items; fix the judge and rerun the same command to retry them"
        )
    return None
