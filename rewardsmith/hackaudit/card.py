"""The verifier card: one page that says how far a reward can be trusted, to publish beside the reward.

``summary.md`` is the audit's working record; the card is what a reader of a reward needs and no more: the grade and
why, each rate with its interval (attacks, honest controls, right forms, the search's share of rows), the sealed
exploits with their seals, and the one command that checks them again after a fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CARD_FILE = "card.md"
CARD_EXPLOITS = 10


def _rate(block: Mapping[str, Any] | None) -> str:
    if not block or block.get("rate") is None:
        return "n/a"
    return f"{block['rate'] * 100:.1f}% [{block['low'] * 100:.1f}, {block['high'] * 100:.1f}]"


def _spec_arg(spec: str) -> str:
    return "SPEC" if spec == "<inline>" else spec  # a spec given as a document has no path to name


def render_card(m: Mapping[str, Any]) -> str:
    run, g = m["run"], m["grade"]
    lines = [
        f"# Verifier card: {', '.join(run['rewards']) or run['spec']} — grade {g['grade']}",
        "",
        f"- **spec**: {run['spec']} (digest `{run['spec_digest']}`)",
        f"- **data**: {run['data']} — {run['n_rows']} rows; scored correct means score >= {run['threshold']}",
        f"- **soundness {g['soundness']['grade']}**: {g['soundness']['why']}",
        f"- **completeness {g['completeness']['grade']}**: {g['completeness']['why']}",
        "- **rule**: docs/reward-audit.md, *The grade* (Wilson 95 % intervals, rows as clusters)",
        "",
        "| measure | paid | rate [95% CI] |",
        "|---|---|---|",
    ]
    c = m["controls"]
    lines.append(f"| honest controls (right answers) | {c.get('scored_correct', 0)}/{c.get('n', 0)} | {_rate(c)} |")
    overall = (m.get("completeness") or {}).get("overall")
    if overall and overall.get("n"):
        lines.append(f"| right answers written other ways | {overall['paid']}/{overall['n']} | {_rate(overall)} |")
    for name, a in m["attacks"].items():
        if a.get("n"):
            lines.append(f"| attack `{name}` (wrong) | {a['scored_correct']}/{a['n']} | {_rate(a)} |")
    share = g.get("search_share")
    search = m.get("search")
    if search and share:
        lines.append(f"| exploit search: rows with a finding | {share['rows']}/{share['n_rows']} | {_rate(share)} |")
        lines += [
            "",
            f"## Sealed exploits ({search['found']} in {search['evaluated']} searched completions, "
            f"seed {search['seed']})",
            "",
        ]
        for f in search["findings"][:CARD_EXPLOITS]:
            tail = f["completion"][-80:].replace("`", "'").replace("\n", "⏎")
            lines.append(f"- row {f['row']}, score {f['score']}, seal `{f['seal'][:16]}`: `{tail}` ({f['origin']})")
        if not search["findings"]:
            lines.append("- none found")
        lines += [
            "",
            "Check them again after a fix (exit 1 while any still pays):",
            "",
            f"    rewardsmith audit replay {search['findings_file']} --spec {_spec_arg(run['spec'])}",
        ]
    else:
        lines += ["", "No exploit search was run (`--search-budget N`): an A grade needs one."]
    return "\n".join(lines) + "\n"
