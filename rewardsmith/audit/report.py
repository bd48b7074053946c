"""Audit outputs: ``metrics.json``, ``summary.md`` and a self-contained ``report.html``.

The HTML has no external resources: plots are matplotlib figures (Agg backend) embedded as base64
PNG, styles are inline. Plots: per-bias bars with 95 % intervals, P(judge picks the gold) against
the length difference with the fitted logistic curve, and the verdicts of the two presentation orders
as a confusion grid.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rewardsmith.audit.flags import coverage_problem
from rewardsmith.audit.stats import Estimate, sigmoid

METRICS_FILE = "metrics.json"
SUMMARY_FILE = "summary.md"
HTML_FILE = "report.html"


def write_report(out_dir: str | os.PathLike[str], metrics: Mapping[str, Any]) -> dict[str, Path]:
    """Write the three outputs into ``out_dir``; returns their paths.

    Metrics computed in Python (``compute_metrics`` over ``load_run``) carry no run record: the header's judge and
    set hash then come from the run directory's manifest, so a report never shows them as unknown.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if not metrics.get("run"):
        metrics = {**metrics, "run": manifest_record(out)}
    paths = {"metrics": out / METRICS_FILE, "summary": out / SUMMARY_FILE, "html": out / HTML_FILE}
    _atomic_write(paths["metrics"], json.dumps(metrics, indent=2, allow_nan=False))
    _atomic_write(paths["summary"], render_markdown(metrics))
    _atomic_write(paths["html"], render_html(metrics))
    return paths


def manifest_record(out: Path) -> dict[str, Any]:
    """The header's run record from ``out``'s manifest (judge, set hash); the set is named by how it was given."""
    from rewardsmith.audit.runner import MANIFEST_FILE

    path = out / MANIFEST_FILE
    if not path.is_file():
        return {}
    manifest = json.loads(path.read_text())
    return {"set_name": "items given in Python", **manifest}


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _est(d: Any) -> Estimate | None:
    return Estimate.model_validate(d) if isinstance(d, Mapping) and "value" in d else None


def _fmt(d: Any, pct: bool = True) -> str:
    e = _est(d)
    return e.fmt(pct=pct) if e else "n/a"


def metric_rows(m: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(section, metric, value [CI]) rows shared by the markdown and HTML tables."""
    pos, length = m.get("position") or {}, m.get("length") or {}
    by_construction = "0 by construction (each response is scored alone)"
    rows = [
        ("accuracy", "accuracy (both orders, JudgeBench)", _fmt(m.get("accuracy"))),
        ("accuracy", "per-order accuracy (one presentation order)", _fmt(m.get("order_accuracy"))),
        ("accuracy", "length-controlled per-order accuracy", _fmt(length.get("lc_accuracy"))),
        ("accuracy", "Cohen's kappa vs gold", _fmt(m.get("kappa_gold"), pct=False)),
        ("accuracy", "abstain rate", _fmt(m.get("abstain_rate"))),
        (
            "position",
            "position bias (2·first-slot rate − 1)",
            by_construction if pos.get("order_free") else _fmt(pos.get("position_bias")),
        ),
        ("position", "first-slot win rate", _fmt(pos.get("first_slot_rate"))),
        ("position", "swap consistency", _fmt(pos.get("consistency"))),
        ("length", "length bias (share of decisions by length)", _fmt(length.get("length_bias"))),
        ("length", "longer wins when gold is shorter", _fmt(length.get("longer_wins_when_gold_shorter"))),
        ("length", "shorter wins when gold is longer", _fmt(length.get("shorter_wins_when_gold_longer"))),
        ("length", "logistic coefficient per SD of length difference", _fmt(length.get("length_coef"), pct=False)),
    ]
    if m.get("agreement"):
        rows.append(("agreement", "Cohen's kappa vs other judge", _fmt(m["agreement"], pct=False)))
    for name, pm in (m.get("perturbations") or {}).items():
        rows.append(
            ("perturbation", f"{name}: susceptibility (+ pulled to the cue, − errors corrected)",
             _fmt(pm.get("susceptibility")))
        )  # fmt: skip
        rows.append(("perturbation", f"{name}: flip rate (orders)", _fmt(pm.get("flip_rate"))))
        rows.append(("perturbation", f"{name}: flip rate (verdicts)", _fmt(pm.get("verdict_flip_rate"))))
    sp = m.get("self_preference")
    if sp:
        if sp.get("self_preference"):
            rows.append(("self", "self-preference", _fmt(sp["self_preference"])))
            rows.append(("self", "own response wins", _fmt(sp.get("own_win_rate"))))
        else:
            rows.append(("self", "self-preference", sp.get("reason", "n/a")))
    for cat, acc in (m.get("by_category") or {}).items():
        rows.append(("category", f"accuracy on {cat}", _fmt(acc)))
    return rows


def judged_by_line(runs: list[Mapping[str, Any]]) -> str:
    """The transports that judged, per run: ``llama.cpp server`` or the fallback with its reason."""
    parts = []
    for number, run in enumerate(runs, 1):
        text = f"run {number}: {run.get('transport', '?')} ({run.get('model', '?')})"
        if run.get("fallback"):
            midway = "after the server had answered, " if run.get("switched_midway") else ""
            text += f" — fell back {midway}because {run.get('fallback_reason')}"
        parts.append(text)
    return "; ".join(parts)


def _header(m: Mapping[str, Any]) -> list[tuple[str, str]]:
    info = m.get("run") or {}
    gold = info.get("gold_check") or {}
    return [
        ("judge", str(info.get("judge", "?"))),
        *([("judged by", judged_by_line(info["judged_by"]))] if info.get("judged_by") else []),
        ("set", f"{info.get('set_name', '?')} — {m.get('n_items', 0)} items, {m.get('n_judged', 0)} judged"),
        ("set hash", str(info.get("set_hash", "?"))[:16]),
        ("gold verification", ", ".join(f"{k} {v}" for k, v in gold.items()) or "not run"),
        ("judge calls", str(info.get("calls", "?"))),
        *(
            [("not judged", f"{info['failed_now']} judge task(s) failed and are not in these metrics; rerun to retry")]
            if info.get("failed_now")
            else []
        ),
    ]


INTERVALS = "95 % intervals: Wilson for rates, Newcombe for differences of rates, BCa bootstrap over items otherwise"


def _flag_rule(m: Mapping[str, Any]) -> str:
    tests = m.get("bias_tests") or {}
    k = len(tests)
    return (
        f"A bias is flagged when it is significant after Holm's correction over the {k} bias test"
        f"{'' if k == 1 else 's'} of this audit (family-wise 5 %) and at least 10 % in size."
    )


def no_findings_line(m: Mapping[str, Any]) -> str:
    """What the findings say when nothing is flagged: "no bias flagged" only when the verdicts cover the audit."""
    problem = coverage_problem(m)
    return "no bias flagged" if problem is None else f"no finding can be trusted: {problem}"


def render_markdown(m: Mapping[str, Any]) -> str:
    lines = ["# Judge bias audit", ""]
    problem = coverage_problem(m)
    if problem:
        lines += [f"**{problem}**", ""]
    lines += [f"- **{k}**: {v}" for k, v in _header(m)]
    lines += ["", "## Findings", ""]
    found = m.get("flags") or []
    lines += [f"- **{f['severity'].upper()}** {f['message']}" for f in found] or [f"- {no_findings_line(m)}"]
    lines += ["", _flag_rule(m)]
    lines += [
        "",
        f"## Metrics ({INTERVALS})",
        "",
        "| section | metric | value [CI] |",
        "|---|---|---|",
    ]
    lines += [f"| {s} | {k} | {v} |" for s, k, v in metric_rows(m)]
    return "\n".join(lines) + "\n"


# -- plots -------------------------------------------------------------------------------------------


def _figure_png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_bias_bars(m: Mapping[str, Any]) -> str | None:
    """Signed bias estimates with their intervals; red when flagged."""
    entries: list[tuple[str, Estimate]] = []
    pos, length = m.get("position") or {}, m.get("length") or {}
    for label, d in (("position", pos.get("position_bias")), ("length", length.get("length_bias"))):
        if label == "position" and pos.get("order_free"):
            continue
        e = _est(d)
        if e and e.value is not None:
            entries.append((label, e))
    for name, pm in (m.get("perturbations") or {}).items():
        e = _est(pm.get("susceptibility"))
        if e and e.value is not None:
            entries.append((f"{name} cue", e))
    sp = _est((m.get("self_preference") or {}).get("self_preference"))
    if sp and sp.value is not None:
        entries.append(("self-preference", sp))
    if not entries:
        return None
    flagged = {f["bias"].split(":")[-1] for f in m.get("flags") or []}
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.55 * len(entries) + 1.4))
    ys = np.arange(len(entries))[::-1]
    values = np.array([e.value for _, e in entries])
    lows = np.array([e.low if e.low is not None else e.value for _, e in entries])
    highs = np.array([e.high if e.high is not None else e.value for _, e in entries])
    colors = ["#c0392b" if label.split(" ")[0] in flagged else "#2e86c1" for label, _ in entries]
    ax.barh(ys, values * 100, color=colors, alpha=0.85)
    ax.errorbar(
        values * 100,
        ys,
        xerr=[(values - lows) * 100, (highs - values) * 100],
        fmt="none",
        ecolor="black",
        capsize=4,
        lw=1.2,
    )
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(ys, [label for label, _ in entries])
    ax.set_xlabel("share of decisions driven by the bias (%) — 0 = unbiased; bars: 95% CI")
    ax.set_xlim(min(-10, float(lows.min()) * 100 - 5), max(10, float(highs.max()) * 100 + 5))
    ax.set_title("Bias estimates (red = flagged)")
    ax.grid(axis="x", alpha=0.3)
    return _figure_png(fig)


def plot_length(m: Mapping[str, Any]) -> str | None:
    """P(an order picks the gold) per length-difference bin, with the fitted logistic curve."""
    length = m.get("length") or {}
    bins = length.get("bins") or []
    if not bins:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4))
    x = np.array([b["diff_chars"] for b in bins])
    y = np.array([b["gold_win_rate"] for b in bins])
    sizes = np.array([b["n"] for b in bins], dtype=float)
    ax.scatter(x, y * 100, s=30 + 170 * sizes / sizes.max(), color="#2e86c1", zorder=3, label="binned decisions")
    fit, scale = length.get("fit"), float(length.get("length_scale_chars") or 1.0)
    if fit:
        grid = np.linspace(min(x.min(), -scale), max(x.max(), scale), 200)
        z = grid / scale
        p = 0.5 * (
            sigmoid(fit["intercept"] + fit["length"] * z + fit["gold_first"])
            + sigmoid(fit["intercept"] + fit["length"] * z - fit["gold_first"])
        )
        ax.plot(grid, p * 100, color="#c0392b", lw=2, label="logistic fit")
    lc = _est(length.get("lc_accuracy"))
    if lc and lc.value is not None:
        ax.axhline(lc.value * 100, color="grey", ls="--", lw=1, label=f"length-controlled: {lc.value * 100:.0f}%")
    ax.axvline(0, color="black", lw=0.6)
    ax.set_ylim(-5, 105)
    ax.set_xlabel("length of gold − length of wrong response (characters)")
    ax.set_ylabel("judge picks the gold (%)")
    ax.set_title("Win rate vs length difference (flat = no length bias)")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    return _figure_png(fig)


def plot_position_confusion(m: Mapping[str, Any]) -> str | None:
    """Counts of (choice with A first, choice with B first); the off-diagonal-by-slot cells are consistent."""
    confusion = (m.get("position") or {}).get("confusion") or {}
    if not confusion:
        return None
    labels = ["first", "second", "abstain"]
    grid = np.zeros((3, 3))
    for key, count in confusion.items():
        a, b = key.split("|")
        grid[labels.index(a), labels.index(b)] = count
    keep = [0, 1, 2] if grid[2].sum() or grid[:, 2].sum() else [0, 1]
    grid = grid[np.ix_(keep, keep)]
    names = [labels[i] for i in keep]
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 4.3))
    ax.imshow(grid, cmap="Blues", vmin=0, vmax=max(1.0, grid.max()))
    for i in range(len(keep)):
        for j in range(len(keep)):
            consistent = (names[i], names[j]) in (("first", "second"), ("second", "first"))
            ax.text(
                j,
                i,
                f"{int(grid[i, j])}\n{'consistent' if consistent else 'position-driven'}",
                ha="center",
                va="center",
                fontsize=9,
                color="white" if grid[i, j] > grid.max() * 0.6 else "black",
            )
    ax.set_xticks(range(len(keep)), [f"picks {n}" for n in names])
    ax.set_yticks(range(len(keep)), [f"picks {n}" for n in names])
    ax.set_xlabel("order B-first")
    ax.set_ylabel("order A-first")
    ax.set_title("Verdicts by position (both orders)")
    return _figure_png(fig)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:980px;margin:2em auto;color:#222;
padding:0 1em}h1{margin-bottom:.2em}table{border-collapse:collapse;width:100%;margin:1em 0}
td,th{border-bottom:1px solid #ddd;padding:.35em .6em;text-align:left;font-size:.92em}
.flag{padding:.5em .8em;margin:.3em 0;border-radius:4px}.high{background:#fdecea;border-left:4px solid #c0392b}
.medium{background:#fef5e7;border-left:4px solid #e67e22}.ok{background:#eafaf1;border-left:4px solid #27ae60}
figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #eee}figcaption{color:#666;font-size:.9em}
.meta td:first-child{font-weight:600;width:12em}
"""


def render_html(m: Mapping[str, Any]) -> str:
    esc = html.escape
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Judge bias audit</title>"
        f"<style>{_CSS}</style></head><body><h1>Judge bias audit</h1>"
    ]
    problem = coverage_problem(m)
    if problem:
        parts.append(f"<div class='flag high' id='coverage'><b>{esc(problem)}</b></div>")
    parts.append(
        "<table class='meta'>"
        + "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in _header(m))
        + "</table>"
    )
    parts.append("<h2>Findings</h2>")
    found = m.get("flags") or []
    parts += [
        f"<div class='flag {esc(f['severity'])}'><b>{esc(f['severity'].upper())}</b> {esc(f['message'])}</div>"
        for f in found
    ] or (
        ["<div class='flag ok'>No bias flagged.</div>"]
        if problem is None
        else [f"<div class='flag high'>{esc(no_findings_line(m))}</div>"]
    )
    parts.append(f"<p>{esc(_flag_rule(m))}</p>")
    plots = [
        ("bias-bars", plot_bias_bars(m), "Share of decisions driven by each bias, with its 95% interval."),
        (
            "length",
            plot_length(m),
            "P(judge picks the gold) against gold-minus-wrong length; flat means no length "
            "bias, a rising curve means the judge rewards length.",
        ),
        (
            "position",
            plot_position_confusion(m),
            "Each item is judged twice; 'first|first' means both orders picked whatever was shown first.",
        ),
    ]
    parts.append("<h2>Plots</h2>")
    for name, png, caption in plots:
        if png:
            parts.append(
                f"<figure id='plot-{name}'><img class='plot' alt='{esc(name)} plot' "
                f"src='data:image/png;base64,{png}'><figcaption>{esc(caption)}</figcaption></figure>"
            )
    parts.append(f"<h2>Metrics</h2><p>{esc(INTERVALS)}.</p>")
    parts.append("<table><tr><th>section</th><th>metric</th><th>value [95% CI]</th></tr>")
    parts += [f"<tr><td>{esc(s)}</td><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for s, k, v in metric_rows(m)]
    parts.append("</table></body></html>")
    return "\n".join(parts)
