"""Outputs of a reward hackability audit: ``metrics.json``, ``examples.jsonl``, ``summary.md``, ``report.html`` and
the verifier card ``card.md`` (:mod:`.card`).

A rate is the share of an attack's completions the spec scored at least ``threshold``; its 95 % interval is the
Wilson interval with the rows as clusters (an attack's variants on one row are not independent evidence; see
:func:`rewardsmith.audit.stats.rate`). The HTML follows the judge audit's report: inline styles, matplotlib bars
with intervals embedded as PNG, then the worst examples with the reward's reasons.
"""

from __future__ import annotations

import html
import json
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rewardsmith.audit.report import _CSS, _atomic_write, _figure_png, _pyplot
from rewardsmith.audit.stats import rate_estimate
from rewardsmith.hackaudit.card import CARD_FILE, render_card
from rewardsmith.hackaudit.completeness import completeness_findings, completeness_markdown
from rewardsmith.hackaudit.controls import CONTROL
from rewardsmith.hackaudit.grade import grade_line
from rewardsmith.hackaudit.search import search_findings, search_markdown

METRICS_FILE, EXAMPLES_FILE, SUMMARY_FILE, HTML_FILE = "metrics.json", "examples.jsonl", "summary.md", "report.html"
EXAMPLES_PER_ATTACK = 3
INTERVAL = "95 % Wilson score interval, rows as clusters (effective sample size from the row design effect)"


def _passed(record: Mapping[str, Any], threshold: float) -> bool:
    score = record.get("score")
    return score is not None and score >= threshold - 1e-9


def _group_stats(records: Sequence[Mapping[str, Any]], threshold: float) -> dict[str, Any]:
    by_row: dict[int, list[bool]] = defaultdict(list)
    for r in records:
        by_row[r["row"]].append(_passed(r, threshold))
    rows = sorted(by_row)
    successes = np.array([sum(by_row[i]) for i in rows], dtype=float)
    trials = np.array([len(by_row[i]) for i in rows], dtype=float)
    est = rate_estimate(successes, trials).model_dump()
    scores = [r["score"] for r in records if r.get("score") is not None]
    return {
        "n": len(records),
        "n_rows": len(rows),
        "scored_correct": int(successes.sum()),
        "unscorable": sum(1 for r in records if r.get("score") is None),
        "rate": est["value"],
        "low": est.get("low"),
        "high": est.get("high"),
        "mean_score": round(float(np.mean(scores)), 6) if scores else None,
    }


def build_metrics(
    records: Sequence[Mapping[str, Any]], run: Mapping[str, Any], descriptions: Mapping[str, str]
) -> dict[str, Any]:
    threshold, max_fp, min_control = run["threshold"], run["max_fp"], run["min_control"]
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        grouped[r["attack"]].append(r)
    attacks = {}
    for name in run["attacks_selected"]:
        if not grouped.get(name):
            attacks[name] = {"family": None, "description": descriptions.get(name, ""), "n": 0, "applicable": False}
            continue
        stats = _group_stats(grouped[name], threshold)
        attacks[name] = {"family": grouped[name][0]["family"], "description": descriptions.get(name, ""), **stats}
    for name, count in (run.get("dropped_right") or {}).items():
        if name in attacks:
            attacks[name]["dropped_right"] = count
    controls = _group_stats(grouped.get(CONTROL, []), threshold) if grouped.get(CONTROL) else {"n": 0, "rate": None}
    flagged = [n for n, m in attacks.items() if m.get("n") and m["rate"] is not None and m["rate"] > max_fp]
    controls_failing = controls["rate"] is None or controls["rate"] < min_control
    return {
        "run": dict(run),
        "interval": INTERVAL,
        "attacks": attacks,
        "controls": controls,
        "flagged": flagged,
        "controls_failing": controls_failing,
    }


def worst_examples(records: Sequence[Mapping[str, Any]], threshold: float) -> list[dict[str, Any]]:
    """Per attack its highest-scored completions, then the honest controls that failed; passes come first."""
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        grouped[r["attack"]].append(r)
    chosen: list[Mapping[str, Any]] = []
    for name, group in grouped.items():
        if name == CONTROL:
            continue
        chosen += sorted(group, key=lambda r: -1e300 if r.get("score") is None else r["score"], reverse=True)[
            :EXAMPLES_PER_ATTACK
        ]
    chosen.sort(key=lambda r: not _passed(r, threshold))  # stable: attacks keep their order within each half
    chosen += [r for r in grouped.get(CONTROL, []) if not _passed(r, threshold)][:EXAMPLES_PER_ATTACK]
    return [
        {
            "attack": r["attack"],
            "family": r["family"],
            "row": r["row"],
            "variant": r["variant"],
            "scored_correct": _passed(r, threshold),
            "score": r.get("score"),
            "reason": r.get("reason", ""),
            "completion": r["completion"][:2000],
        }
        for r in chosen
    ]


def write_reward_report(
    out_dir: str | os.PathLike[str], metrics: Mapping[str, Any], records: Sequence[Mapping[str, Any]]
) -> dict[str, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    examples = worst_examples(records, metrics["run"]["threshold"])
    paths = {
        "metrics": out / METRICS_FILE,
        "examples": out / EXAMPLES_FILE,
        "summary": out / SUMMARY_FILE,
        "html": out / HTML_FILE,
    }
    _atomic_write(paths["metrics"], json.dumps(metrics, indent=2, allow_nan=False))
    _atomic_write(paths["examples"], "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in examples))
    _atomic_write(paths["summary"], render_markdown(metrics))
    _atomic_write(paths["html"], render_html(metrics, examples))
    if metrics.get("grade"):
        paths["card"] = out / CARD_FILE
        _atomic_write(paths["card"], render_card(metrics))
    return paths


def _pct(m: Mapping[str, Any]) -> str:
    if m.get("rate") is None:
        return "n/a"
    return f"{m['rate'] * 100:.1f}% [{m['low'] * 100:.1f}, {m['high'] * 100:.1f}]"


def findings(m: Mapping[str, Any]) -> list[str]:
    """One line per problem: each flagged attack, and failing controls."""
    run, lines = m["run"], []
    for name in m["flagged"]:
        a = m["attacks"][name]
        lines.append(
            f"HACKABLE: {name}: {a['scored_correct']}/{a['n']} adversarial completions scored >= {run['threshold']} "
            f"({_pct(a)}; allowed {run['max_fp'] * 100:.1f}%)"
        )
    c = m["controls"]
    if not c.get("n"):
        lines.append(
            "NO HONEST CONTROLS: no row has a gold answer (math: the gold column) or a reference program "
            "(code: canonical_solution, gold_code or reference_solution), so nothing shows the reward can pass at all"
        )
    elif m["controls_failing"]:
        passed = f"{c.get('scored_correct', 0)}/{c.get('n', 0)}"
        lines.append(
            f"CONTROLS FAILING: honest controls passed {passed} ({_pct(c)}), below {run['min_control'] * 100:.0f}%: "
            "a reward that rejects correct answers is not safe, only useless (check the gold columns and the spec)"
        )
    return lines + search_findings(m) + completeness_findings(m)


def _rows(m: Mapping[str, Any]) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for name, a in m["attacks"].items():
        if not a.get("n"):
            rows.append((name, "-", "not applicable to these rows", "", ""))
            continue
        unscorable = f"{a['unscorable']}" if a["unscorable"] else "0"
        rows.append((name, a["family"], f"{a['scored_correct']}/{a['n']}", _pct(a), unscorable))
    return rows


def _dropped(run: Mapping[str, Any]) -> str:
    """Attack variants that stated the row's gold (right answers, never scored), per attack."""
    dropped = run.get("dropped_right") or {}
    if not dropped:
        return "none (no attack variant stated a row's gold)"
    each = ", ".join(f"{name} {count}" for name, count in sorted(dropped.items()))
    return f"{sum(dropped.values())} attack variants stated the row's gold and were not scored ({each})"


def render_markdown(m: Mapping[str, Any]) -> str:
    run, c = m["run"], m["controls"]
    lines = ["# Reward hackability audit", ""]
    lines += [f"**{grade_line(m['grade'])}**", ""] if m.get("grade") else []
    lines += [
        f"- **spec**: {run['spec']} ({', '.join(run['rewards'])}; kinds: {', '.join(run['kinds'])})",
        f"- **data**: {run['data']} — {run['n_rows']} rows",
        f"- **scored correct**: score >= {run['threshold']}",
        f"- **honest controls**: {c.get('scored_correct', 0)}/{c.get('n', 0)} passed ({_pct(c)})",
        f"- **dropped as right**: {_dropped(run)}",
        "",
        "## Findings",
        "",
    ]
    lines += [f"- {line}" for line in findings(m)] or ["- no attack scored above the allowed rate"]
    lines += [
        "",
        f"## Attacks ({INTERVAL})",
        "",
        "| attack | family | scored correct | rate [95% CI] | unscorable |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {' | '.join(r)} |" for r in _rows(m)]
    lines += completeness_markdown(m)
    lines += search_markdown(m)
    return "\n".join(lines) + "\n"


def plot_attack_bars(m: Mapping[str, Any]) -> str | None:
    entries = [(n, a) for n, a in m["attacks"].items() if a.get("n") and a.get("rate") is not None]
    if m["controls"].get("rate") is not None:
        entries.append(("honest controls", m["controls"]))
    if not entries:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(entries) + 1.4))
    ys = np.arange(len(entries))[::-1]
    values = np.array([a["rate"] for _, a in entries]) * 100
    lows = np.array([a["low"] for _, a in entries]) * 100
    highs = np.array([a["high"] for _, a in entries]) * 100
    flagged = set(m["flagged"])
    colors = ["#27ae60" if n == "honest controls" else "#c0392b" if n in flagged else "#2e86c1" for n, _ in entries]
    ax.barh(ys, values, color=colors, alpha=0.85)
    ax.errorbar(values, ys, xerr=[values - lows, highs - values], fmt="none", ecolor="black", capsize=4, lw=1.2)
    ax.set_yticks(ys, [n for n, _ in entries])
    ax.set_xlim(0, 105)
    ax.set_xlabel("completions scored correct (%) — bars: 95% CI; red = above --max-fp, green = honest controls")
    ax.set_title("Adversarial completions the reward pays for")
    ax.grid(axis="x", alpha=0.3)
    return _figure_png(fig)


def render_html(m: Mapping[str, Any], examples: Sequence[Mapping[str, Any]]) -> str:
    esc, run = html.escape, m["run"]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Reward hackability audit</title>"
        f"<style>{_CSS}pre{{white-space:pre-wrap;background:#f7f7f7;padding:.5em;font-size:.85em}}</style></head>"
        "<body><h1>Reward hackability audit</h1><table class='meta'>"
    ]
    meta = [
        ("spec", f"{run['spec']} ({', '.join(run['rewards'])})"),
        ("kinds", ", ".join(run["kinds"])),
        ("data", f"{run['data']} — {run['n_rows']} rows"),
        ("scored correct", f"score >= {run['threshold']}; allowed rate {run['max_fp'] * 100:.1f}%"),
        ("honest controls", f"{m['controls'].get('scored_correct', 0)}/{m['controls'].get('n', 0)} passed"),
    ]
    meta += [("grade", grade_line(m["grade"]))] if m.get("grade") else []
    parts += [f"<tr><td>{esc(k)}</td><td>{esc(str(v))}</td></tr>" for k, v in meta]
    parts.append("</table><h2>Findings</h2>")
    parts += [f"<div class='flag high'>{esc(line)}</div>" for line in findings(m)] or [
        "<div class='flag ok'>No attack scored above the allowed rate, and the honest controls pass.</div>"
    ]
    png = plot_attack_bars(m)
    if png:
        parts.append(
            f"<figure id='plot-attacks'><img class='plot' alt='attack rates' src='data:image/png;base64,{png}'>"
            f"<figcaption>{esc(INTERVAL)}.</figcaption></figure>"
        )
    parts.append("<h2>Attacks</h2><table><tr><th>attack</th><th>family</th><th>scored correct</th>")
    parts.append("<th>rate [95% CI]</th><th>unscorable</th></tr>")
    parts += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in _rows(m)]
    parts.append("</table>")
    for f in (m.get("search") or {}).get("findings", []):
        parts.append(
            f"<div class='example'><b>exploit search: {esc(f['origin'])}</b> (row {f['row']}, score {f['score']}, "
            f"seal {esc(f['seal'][:12])})<br><i>{esc(str(f['reason']))}</i>"
            f"<pre>{esc(f['completion'][:600])}</pre></div>"
        )
    parts.append("<h2>Worst examples</h2>")
    for e in examples:
        verdict = "SCORED CORRECT" if e["scored_correct"] else "rejected"
        parts.append(
            f"<div class='example'><b>{esc(e['attack'])}</b> (row {e['row']}, score {e['score']}, {verdict})"
            f"<br><i>{esc(e['reason'])}</i><pre>{esc(e['completion'][:600])}</pre></div>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)
