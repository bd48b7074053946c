"""The audit as a library call: :func:`run_audit` judges a held-out set, then writes metrics and the report.

``rewardsmith audit run`` only parses arguments and calls these functions, so a Python user gets the same
resume (rerun into the same directory), gold verification, leakage warnings and summary.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.audit.runner import RunSummary

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
    from rewardsmith.audit.generators import SET_KINDS, generate_set
    from rewardsmith.heldout.sets import read_set

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
    from rewardsmith.audit.verify import summarize, verify_gold

    verdicts = verify_gold(items)
    bad = {v.item_id for v in verdicts if v.status == "contradicted"}
    for v in verdicts:
        if v.status == "contradicted":
            logger.warning("dropping %s: %s", v.item_id, v.reason)
    return [it for it in items if it.id not in bad], summarize(verdicts)


def leakage_warnings(items: list[Any], data_files: list[str], prompt_column: str = "prompt") -> list[str]:
    """One message per DPO/RLAIF data file that holds prompts of this held-out set."""
    from rewardsmith.heldout.leakage import find_leaks

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
    question: str | None = None,
) -> AuditOutcome:
    """Judge ``items`` with ``judge`` in both orders (plus cues), then write metrics.json, summary.md, report.html.

    Rerunning into the same ``out`` judges only what is missing. The held-out set is recorded so later RLAIF
    runs warn when they reuse its prompts; ``against`` checks given data files for such leakage now.
    ``question`` is the comparison question asked with every pair (the template's default when ``None``).
    Each run is appended to ``run_info.json`` (``runs``), so the failures of earlier runs stay on record.
    A judge whose ``order_free`` is true (a reward model scores each response alone) is recorded as such, and its
    position bias is reported as zero by construction instead of being tested.
    The report's plots need the ``audit`` extra (matplotlib): without it this refuses before judging anything,
    naming the install, rather than failing after the judging (:class:`~rewardsmith.extras.MissingExtra`).
    Before any judging the judge is asked once: an endpoint that cannot answer raises
    :class:`~rewardsmith.audit.preflight.JudgeUnavailable` naming it and the fix. A run whose verdicts cover
    nothing (or less than half of its tasks) says so at the head of its summary and report.
    """
    from rewardsmith.audit.runner import AuditRunner
    from rewardsmith.heldout.leakage import record_audited_set

    check_report_needs()
    out = Path(out)
    leaks = leakage_warnings(items, list(against))
    added = 0
    if self_generate > 0 and getattr(judge, "client", None) is None:
        raise ValueError(f"judge {judge.model!r} has no model client to write its own answers (self_generate)")
    if self_generate > 0:
        from rewardsmith.audit.preflight import check_judge
        from rewardsmith.audit.selfgen import own_generation_items

        check_judge(judge)  # before the judge writes its own answers (the runner then need not ask again)

        own = own_generation_items(items, judge.client, self_generate, seed=seed)
        added = len(own)
        items = items + own
    runner = AuditRunner(
        judge,
        items,
        out,
        perturbations=list(perturbations),
        concurrency=concurrency,
        question=question,
        progress=progress,
        preflight=self_generate <= 0,
    )
    record_audited_set(runner.items, name=set_name)
    summary = runner.run()
    this_run: dict[str, Any] = {
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "tasks": summary.total,
        "judged": summary.judged,
        "reused": summary.reused,
        "failed": summary.failed,
        "errors": summary.errors,
        "judged_by": summary.judged_by,
    }
    usage = getattr(getattr(judge, "client", None), "report", None)
    if callable(usage):
        try:
            this_run["usage"] = usage().model_dump(mode="json")
        except Exception:  # usage accounting is informative only
            logger.debug("no usage report", exc_info=True)
    order_free = bool(getattr(judge, "order_free", False))
    extra = record_run(out, this_run, set_name=set_name, gold_check=gold_check or {}, order_free=order_free)
    metrics, paths = write_outputs(out, extra=extra, compare=compare, self_model=self_model, n_boot=n_boot)
    return AuditOutcome(summary=summary, metrics=metrics, paths=paths, added_items=added, leaks=leaks)


def check_report_needs(what: str = "run_audit (the report's plots)") -> None:
    """Raise :class:`~rewardsmith.extras.MissingExtra` when the report cannot be drawn here (the CLI's check)."""
    from rewardsmith.extras import MissingExtra, missing_extra

    problem = missing_extra("audit", what)
    if problem:
        raise MissingExtra(problem)


def record_run(out: Path, this_run: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """Append ``this_run`` to the run history in ``out/run_info.json`` and return the updated record.

    ``runs`` lists every run (judged, reused, failed, the first errors, usage); ``failed_total`` adds up
    the failures of all runs and ``failed_now`` is the tasks still without a verdict (the latest run's
    failures: a rerun retries exactly those). ``calls`` is the line the report shows.
    """
    path = out / "run_info.json"
    info: dict[str, Any] = {}
    if path.exists():
        try:
            info = json.loads(path.read_text())
        except json.JSONDecodeError:
            logger.warning("%s is unreadable; starting a new run history", path)
    runs = list(info.get("runs", []))
    if not runs and "calls" in info:  # a record written before run histories: keep it as the first run
        runs.append({"calls": info["calls"], **({"usage": info["usage"]} if "usage" in info else {})})
    runs.append(this_run)
    failed_total = sum(int(run.get("failed", 0)) for run in runs)
    calls = f"{this_run['judged']} new, {this_run['reused']} reused, {this_run['failed']} failed"
    if len(runs) > 1:
        calls += f" (this run); {failed_total} failed over {len(runs)} runs"
    info.update(fields)
    info.update(
        calls=calls,
        failed_now=this_run["failed"],
        failed_total=failed_total,
        runs=runs,
        usage=this_run.get("usage", info.get("usage")),
    )
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(info, indent=2))
    os.replace(tmp, path)
    return info


def write_outputs(
    out: str | Path,
    *,
    extra: dict[str, Any] | None = None,
    compare: str | Path | None = None,
    self_model: str | None = None,
    n_boot: int = 2000,
) -> tuple[dict[str, Any], dict[str, Path]]:
    """(Re)compute the metrics of a run directory and render its report; returns (metrics, written paths).

    ``extra`` (the run record, see :func:`record_run`) goes into ``metrics["run"]``; without it the record
    is read from ``run_info.json``.
    """
    from rewardsmith.audit.metrics import compute_metrics
    from rewardsmith.audit.report import write_report
    from rewardsmith.audit.runner import load_run, load_verdicts

    out = Path(out)
    items, verdicts, manifest = load_run(out)
    info_path = out / "run_info.json"
    if not extra and info_path.exists():
        extra = json.loads(info_path.read_text())
    other = load_verdicts(compare) if compare else None
    metrics = compute_metrics(
        items,
        verdicts,
        self_model=self_model or manifest.get("judge"),
        other=other,
        n_boot=n_boot,
        order_free=bool((extra or {}).get("order_free")),
    )
    metrics["run"] = {**manifest, **(extra or {})}
    return metrics, write_report(out, metrics)
