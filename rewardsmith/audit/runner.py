"""A resumable audit run: every (item, perturbation) judged once, verdicts appended as they arrive.

The run directory holds ``set.jsonl`` (the audited items), ``run.json`` (set hash, judge, plan) and
``verdicts.jsonl`` — append-only, one line per ``item_id|perturbation`` key. ``run.json`` also records how
the judge reads (its method, template, log-probs, chain of thought) and the question asked, and a rerun
with a judge configured otherwise is refused rather than mixed in. After each run, ``run.json`` says which
transport really judged (``judged_by``, one entry per run: the embedded judge's llama.cpp server, or its
in-process fallback with the crash that caused it and whether it switched midway), and ``judge`` names the model
that did (``judge_configured`` the one asked for, which a rerun must match). A rerun with the same directory skips
keys already there, so an interrupted audit continues where it stopped and a finished one costs no judge call.
Before it judges, the runner asks the judge once (:mod:`rewardsmith.audit.preflight`): an endpoint that cannot
answer fails the run at once, with the endpoint and the fix, instead of failing every task after its retries.
Verdicts whose endpoint failed (an order with source ``error``) are not written: infrastructure failures
are retried on the next run, never scored as bias.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rewardsmith.audit.metrics import BASELINE
from rewardsmith.audit.perturb import perturb
from rewardsmith.bridge import run_sync
from rewardsmith.heldout.sets import AuditItem, read_set, set_hash, write_set
from rewardsmith.judges.base import PairwiseJudgeProtocol, PairwiseVerdict
from rewardsmith.judges.pairwise import judge_settings, same_judge_settings
from rewardsmith.store import cut_torn_tail

logger = logging.getLogger(__name__)

SET_FILE = "set.jsonl"
MANIFEST_FILE = "run.json"
VERDICTS_FILE = "verdicts.jsonl"


@dataclass(frozen=True)
class Task:
    """One judge call: an item as shown, possibly with a cue added to its wrong response."""

    item: AuditItem
    perturbation: str
    response_a: str
    response_b: str

    @property
    def key(self) -> str:
        return verdict_key(self.item.id, self.perturbation)


@dataclass
class RunSummary:
    total: int
    reused: int
    judged: int
    failed: int
    out_dir: Path
    errors: list[str] = field(default_factory=list)
    #: the transport that judged this run (see :func:`rewardsmith.judges.clients.provenance.judged_by`); None: no call
    judged_by: dict[str, Any] | None = None


def verdict_key(item_id: str, perturbation: str) -> str:
    return f"{item_id}|{perturbation}"


def plan_tasks(items: Sequence[AuditItem], perturbations: Sequence[str]) -> list[Task]:
    """Baseline for every item, then each perturbation applied to the wrong response of gold items."""
    tasks = [Task(it, BASELINE, it.response_a, it.response_b) for it in items]
    for name in perturbations:
        for it in items:
            if it.gold == "a":
                tasks.append(Task(it, name, it.response_a, perturb(it.response_b, name, key=it.id)))
            elif it.gold == "b":
                tasks.append(Task(it, name, perturb(it.response_a, name, key=it.id), it.response_b))
    return tasks


def load_verdicts(path: str | os.PathLike[str]) -> dict[tuple[str, str], PairwiseVerdict]:
    """Verdicts of a run directory (or a verdicts file), keyed by ``(item_id, perturbation)``.

    A torn last line (the process died mid-write) is skipped; it is judged again on resume.
    """
    path = Path(path)
    if path.is_dir():
        path = path / VERDICTS_FILE
    verdicts: dict[tuple[str, str], PairwiseVerdict] = {}
    if not path.exists():
        return verdicts
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                verdicts[(row["item_id"], row["perturbation"])] = PairwiseVerdict.model_validate(row["verdict"])
            except (json.JSONDecodeError, KeyError, ValidationError):
                logger.warning("%s:%d: unreadable verdict line skipped (judged again on resume)", path, lineno)
    return verdicts


def _failed(verdict: PairwiseVerdict) -> bool:
    return verdict.ab.source == "error" or verdict.ba.source == "error"


class AuditRunner:
    """Judges every planned task that ``out_dir`` does not hold yet, ``concurrency`` at a time."""

    def __init__(
        self,
        judge: PairwiseJudgeProtocol,
        items: Sequence[AuditItem],
        out_dir: str | os.PathLike[str],
        *,
        perturbations: Sequence[str] = (),
        concurrency: int = 4,
        question: str | None = None,
        progress: bool = True,
        preflight: bool = True,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.judge = judge
        self.items = list(items)
        self.out_dir = Path(out_dir)
        self.perturbations = list(perturbations)
        self.concurrency = concurrency
        self.question = question
        self.progress = progress
        #: ask the judge once before judging (:func:`~rewardsmith.audit.preflight.check_judge`)
        self.preflight = preflight
        self.set_hash = set_hash(self.items)

    def run(self) -> RunSummary:
        return run_sync(self.arun(), close=getattr(self.judge, "client", None))

    async def arun(self) -> RunSummary:
        self._prepare_dir()
        verdicts_file = self.out_dir / VERDICTS_FILE
        if verdicts_file.exists():
            cut_torn_tail(verdicts_file)
        done = load_verdicts(self.out_dir)
        tasks = plan_tasks(self.items, self.perturbations)
        pending = [t for t in tasks if (t.item.id, t.perturbation) not in done]
        summary = RunSummary(
            total=len(tasks), reused=len(tasks) - len(pending), judged=0, failed=0, out_dir=self.out_dir
        )
        if not pending:
            return summary
        if self.preflight:  # a dead endpoint or a refused key: one line now, not every task's retries
            from rewardsmith.audit.preflight import acheck_judge

            await acheck_judge(self.judge)
        try:
            return await self._judge_pending(pending, summary, len(tasks))
        finally:
            self._record_judged_by(summary)

    async def _judge_pending(self, pending: list[Task], summary: RunSummary, total: int) -> RunSummary:
        from tqdm import tqdm

        semaphore = asyncio.Semaphore(self.concurrency)
        bar = tqdm(
            total=total,
            initial=summary.reused,
            desc=f"auditing {self.judge.model}",
            unit="call",
            disable=not self.progress,
        )

        async def one(task: Task) -> tuple[Task, PairwiseVerdict | None, str]:
            async with semaphore:
                try:
                    verdict = await self.judge.ajudge(
                        task.item.prompt, task.response_a, task.response_b, question=self.question
                    )
                except Exception as exc:  # one failing call must not end a long audit
                    logger.warning("judge failed on %s: %s", task.key, exc)
                    return task, None, f"{type(exc).__name__}: {exc}"
            return task, verdict, ""

        with (self.out_dir / VERDICTS_FILE).open("a", encoding="utf-8") as fh:
            try:
                # Tasks are created in set order so the semaphore admits items in that order (reproducible runs).
                futures = [asyncio.ensure_future(one(t)) for t in pending]
                for future in asyncio.as_completed(futures):
                    task, verdict, error = await future
                    bar.update(1)
                    if verdict is None or _failed(verdict):
                        summary.failed += 1
                        if verdict is not None:
                            error = verdict.reason
                            logger.warning("endpoint error on %s: %s", task.key, error)
                        if len(summary.errors) < 5:
                            summary.errors.append(f"{task.key}: {error}")
                        continue
                    fh.write(json.dumps(_record(task, verdict), ensure_ascii=False) + "\n")
                    fh.flush()
                    summary.judged += 1
            finally:
                bar.close()
        return summary

    def _prepare_dir(self) -> None:
        """Create the run directory, or check that an existing one audits the same set with the same judge."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        manifest_path = self.out_dir / MANIFEST_FILE
        manifest: dict[str, Any] = {
            "set_hash": self.set_hash,
            "judge": self.judge.model,
            "judge_configured": self.judge.model,
            "judge_settings": judge_settings(self.judge),
            "question": self.question,
            "n_items": len(self.items),
        }
        if manifest_path.exists():
            old = json.loads(manifest_path.read_text())
            asked = {key: old[key] for key in ("judge_settings", "question") if key in old}  # older runs lack them
            if any(
                not (same_judge_settings(value, manifest[key]) if key == "judge_settings" else value == manifest[key])
                for key, value in asked.items()
            ):
                now = {key: manifest[key] for key in asked}
                raise ValueError(
                    f"{self.out_dir} holds an audit of {self.judge.model!r} configured otherwise ({asked}, not {now}); "
                    "use a new --out directory"
                )
            if old.get("set_hash") != self.set_hash:
                raise ValueError(
                    f"{self.out_dir} holds an audit of another set (hash {old.get('set_hash', '?')[:12]}); "
                    "use a new --out directory"
                )
            configured = old.get("judge_configured", old.get("judge"))  # older runs recorded only "judge"
            if configured != self.judge.model:
                raise ValueError(
                    f"{self.out_dir} holds an audit of judge {configured!r}, not {self.judge.model!r}; "
                    "use a new --out directory"
                )
            perturbations = sorted(set(old.get("perturbations", [])) | set(self.perturbations))
            if old.get("judged_by"):  # the runs so far, and the model that judged last (until this run judges)
                manifest["judged_by"] = old["judged_by"]
                manifest["judge"] = old.get("judge", manifest["judge"])
        else:
            perturbations = list(self.perturbations)
            write_set(self.out_dir / SET_FILE, self.items)
        manifest["perturbations"] = perturbations
        _write_manifest(manifest_path, manifest)

    def _record_judged_by(self, summary: RunSummary) -> None:
        """Append this run's transport to ``run.json`` and name the model that judged (after a fallback too)."""
        from rewardsmith.judges.clients.provenance import judged_by

        manifest_path = self.out_dir / MANIFEST_FILE
        manifest = json.loads(manifest_path.read_text())
        # no second warning: the transport logged the crash once; the summary and the report repeat it
        record = {**judged_by(self.judge), "judged": summary.judged, "failed": summary.failed}
        summary.judged_by = record
        manifest["judged_by"] = [*manifest.get("judged_by", []), record]
        manifest["judge"] = record["model"] or manifest.get("judge")
        _write_manifest(manifest_path, manifest)


def _write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    tmp = path.with_name(MANIFEST_FILE + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2))
    os.replace(tmp, path)


def _record(task: Task, verdict: PairwiseVerdict) -> dict[str, Any]:
    return {
        "key": task.key,
        "item_id": task.item.id,
        "perturbation": task.perturbation,
        "verdict": verdict.model_dump(mode="json"),
    }


def load_run(
    out_dir: str | os.PathLike[str],
) -> tuple[list[AuditItem], dict[tuple[str, str], PairwiseVerdict], dict[str, Any]]:
    """Items, verdicts and manifest of a run directory (for re-rendering a report)."""
    out_dir = Path(out_dir)
    manifest_path = out_dir / MANIFEST_FILE
    if not manifest_path.exists():
        raise FileNotFoundError(f"{out_dir} is not an audit run directory (no {MANIFEST_FILE})")
    return read_set(out_dir / SET_FILE), load_verdicts(out_dir), json.loads(manifest_path.read_text())
