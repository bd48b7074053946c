"""The audit as a library call: :func:`run_audit` judges a held-out set, then writes metrics and the report.

``rewardkit audit run`` only parses arguments and calls these functions, so a Python user gets the same
resume (rerun into the same directory), gold verification, leakage warnings and summary.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardkit.audit.runner import RunSummary

logger = logging.getLogger(__name__)

#: Items in a generated set when no size is given.
DEFAULT_N = 60


@dataclass
class AuditOutcome:
    """What an audit run did (judge calls) and found (metrics with their flags), and where it wrote them."""

    summary: RunSummary
    metrics: dict[str, Any]
    paths: dict[str, Path]
    added_items: int = 0
    leaks: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return self.summary.failed


def load_items(set_spec: str, n: int | None = None, seed: int = 0) -> tuple[list[Any], str]:
    """A generated set (by kind: ``math``, ``code``, ``format``, ``mixed``) or a JSONL file; returns (items, name)."""
    from rewardkit.audit.generators import SET_KINDS, generate_set
    from rewardkit.heldout.sets import read_set

    if n is not None and n < 1:
        raise ValueError("--n must be at least 1")
    if set_spec in SET_KINDS:
        return generate_set(set_spec, n or DEFAULT_N, seed), f"{set_spec} (generated, seed {seed})"
    path = Path(set_spec)
    if path.is_dir():
        path = path / "set.jsonl"
    if path.suffix != ".jsonl" and not path.exists():
        raise ValueError(f"--set {set_spec!r}: use one of {', '.join(SET_KINDS)} or a .jsonl file")
    items = read_set(path)
    return (items[:n] if n else items), str(path)


def verified_items(items: list[Any]) -> tuple[list[Any], dict[str, int]]:
    """Drop items whose gold a verifier contradicts; count every status."""
    from rewardkit.audit.verify import summarize, verify_gold

    verdicts = verify_gold(items)
    bad = {v.item_id for v in verdicts if v.status == "contradicted"}
    for v in verdicts:
        if v.status == "contradicted":
            logger.warning("dropping %s: %s", v.item_id, v.reason)
    return [it for it in items if it.id not in bad], summarize(verdicts)


def leakage_warnings(items: list[Any], data_files: list[str], prompt_column: str = "prompt") -> list[str]:
    """One message per DPO/RLAIF data file that holds prompts of this held-out set."""
    from rewardkit.heldout.leakage import find_leaks

    messages = []
    for path in data_files:
        report = find_leaks(items, path, prompt_column=prompt_column)
        if report.leaked:
            messages.append(report.message)
    return messages


def run_audit(
    judge: Any,
    items: list[Any],
    out: str | Path,
    *,
    set_name: str,
    perturbations: list[str] | tuple[str, ...] = (),
    concurrency: int = 4,
    self_generate: int = 0,
    seed: int = 0,
    gold_check: dict[str, int] | None = None,
    against: list[str] | tuple[str, ...] = (),
    compare: str | Path | None = None,
    self_model: str | None = None,
    n_boot: int = 2000,
    progress: bool = True,
) -> AuditOutcome:
    """Judge ``items`` with ``judge`` in both orders (plus cues), then write metrics.json, summary.md, report.html.

    Rerunning into the same ``out`` judges only what is missing. The held-out set is recorded so later RLAIF
    runs warn when they reuse its prompts; ``against`` checks given data files for such leakage now.
    """
    from rewardkit.audit.runner import AuditRunner
    from rewardkit.heldout.leakage import record_audited_set

    out = Path(out)
    leaks = leakage_warnings(items, list(against))
    added = 0
    if self_generate > 0:
        from rewardkit.audit.selfgen import own_generation_items

        own = own_generation_items(items, judge.client, self_generate, seed=seed)
        added = len(own)
        items = items + own
    runner = AuditRunner(
        judge, items, out, perturbations=list(perturbations), concurrency=concurrency, progress=progress
    )
    record_audited_set(runner.items, name=set_name)
    summary = runner.run()
    extra: dict[str, Any] = {
        "set_name": set_name,
        "gold_check": gold_check or {},
        "calls": f"{summary.judged} new, {summary.reused} reused, {summary.failed} failed",
    }
    usage = getattr(getattr(judge, "client", None), "report", None)
    if callable(usage):
        try:
            extra["usage"] = usage().model_dump(mode="json")
        except Exception:  # usage accounting is informative only
            logger.debug("no usage report", exc_info=True)
    metrics, paths = write_outputs(out, extra=extra, compare=compare, self_model=self_model, n_boot=n_boot)
    return AuditOutcome(summary=summary, metrics=metrics, paths=paths, added_items=added, leaks=leaks)


def write_outputs(
    out: str | Path,
    *,
    extra: dict[str, Any] | None = None,
    compare: str | Path | None = None,
    self_model: str | None = None,
    n_boot: int = 2000,
) -> tuple[dict[str, Any], dict[str, Path]]:
    """(Re)compute the metrics of a run directory and render its report; returns (metrics, written paths)."""
    from rewardkit.audit.metrics import compute_metrics
    from rewardkit.audit.report import write_report
    from rewardkit.audit.runner import load_run, load_verdicts

    out = Path(out)
    items, verdicts, manifest = load_run(out)
    info_path = out / "run_info.json"
    if extra:
        info_path.write_text(json.dumps(extra, indent=2))
    elif info_path.exists():
        extra = json.loads(info_path.read_text())
    other = load_verdicts(compare) if compare else None
    metrics = compute_metrics(
        items, verdicts, self_model=self_model or manifest.get("judge"), other=other, n_boot=n_boot
    )
    metrics["run"] = {**manifest, **(extra or {})}
    return metrics, write_report(out, metrics)
