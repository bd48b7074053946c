"""``rewardsmith audit reward`` as a library call: plan the attack completions, score what is not scored yet, report.

Every scored completion is one record of an append-only :class:`~rewardsmith.store.KeyedStore` (``verdicts.jsonl``)
keyed by the spec, the attack, the row and the completion, so a rerun (after a kill, or with more attacks) scores
only what is missing and an edited spec is scored afresh. An attack completion that states the row's gold is a right
answer, not an attack: it is dropped before scoring and counted (``dropped_right`` in the metrics). Rows that carry
a transcript (a list of chat messages) also get the multi-turn audit (:mod:`.trajectories`): ``trajectories`` in the
metrics and ``trajectories.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.hackaudit.attacks import Attack, select_attacks
from rewardsmith.hackaudit.attacks.base import Variant, completion_text, states_gold
from rewardsmith.hackaudit.completeness import measure_completeness
from rewardsmith.hackaudit.controls import CONTROL, honest_controls, row_context
from rewardsmith.hackaudit.grade import grade
from rewardsmith.hackaudit.sealed import FINDINGS_FILE, seal_findings, write_findings
from rewardsmith.hackaudit.search import search_exploits, search_metrics
from rewardsmith.hackaudit.spec_kinds import SpecProfile, profile_spec
from rewardsmith.hackaudit.trajectories import audit_trajectories, transcript_column
from rewardsmith.hackaudit.trajectories import render_markdown as render_trajectories

VERDICTS_FILE = "verdicts.jsonl"
TRAJECTORIES_FILE = "trajectories.md"
BATCH = 64


@dataclass(frozen=True)
class PlannedCompletion:
    key: str
    attack: str
    family: str
    row: int
    variant: int
    completion: str


@dataclass
class RewardAuditOutcome:
    metrics: dict[str, Any]
    paths: dict[str, Path]
    scored_now: int
    reused: int

    @property
    def flagged(self) -> list[str]:
        return self.metrics["flagged"]

    @property
    def controls_failing(self) -> bool:
        return bool(self.metrics["controls_failing"])


def load_raw_spec(source: str | os.PathLike[str] | dict | list) -> Any:
    """The spec document: as given, or a file read as untrusted (:mod:`rewardsmith.spec_files`; one-line errors)."""
    if isinstance(source, (dict, list)):
        return source
    from rewardsmith.spec_files import read_spec_file

    return read_spec_file(source)


def spec_digest(raw_spec: Any) -> str:
    return hashlib.sha256(json.dumps(raw_spec, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class Plan:
    """The completions to score, and per attack how many of its variants stated the gold and were dropped."""

    completions: list[PlannedCompletion]
    dropped_right: dict[str, int]


def plan(rows: list[dict[str, Any]], attacks: list[Attack], profile: SpecProfile, digest: str, seed: int = 0) -> Plan:
    """Every completion to score: the honest controls, then each attack's variants, row by row (less the variants
    that state the row's gold: those are right answers, and a reward that pays them is right to)."""
    out: list[PlannedCompletion] = []
    dropped: dict[str, int] = {}
    for index, row in enumerate(rows):
        ctx = row_context(row, profile, seed=seed)
        generated: list[tuple[str, str, Sequence[str | Variant]]] = [(CONTROL, "control", honest_controls(ctx))]
        generated += [(a.name, a.family, a.generate(ctx)) for a in attacks]
        for name, family, completions in generated:
            for variant, item in enumerate(completions):
                if name != CONTROL and states_gold(item, ctx.gold):
                    dropped[name] = dropped.get(name, 0) + 1
                    continue
                text = completion_text(item)
                blob = json.dumps([digest, name, index, variant, text, seed])
                key = hashlib.sha256(blob.encode()).hexdigest()[:24]
                out.append(PlannedCompletion(key, name, family, index, variant, text))
    return Plan(out, dropped)


def _batches(items: list[PlannedCompletion], size: int) -> Iterator[list[PlannedCompletion]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def run_reward_audit(
    spec: str | os.PathLike[str] | dict | list,
    data: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    attacks: str = "all",
    max_fp: float = 0.0,
    threshold: float = 1.0,
    min_control: float = 1.0,
    seed: int = 0,
    progress: bool = False,
    search_budget: int = 0,
) -> RewardAuditOutcome:
    """Score every applicable attack (and the honest controls) with ``spec`` on ``data``; with a ``search_budget``,
    search for further exploits and seal what it finds (``findings.jsonl``); grade the audit; write the report."""
    from rewardsmith.adapters.spec import load_spec
    from rewardsmith.data import read_records
    from rewardsmith.hackaudit.report import build_metrics, write_reward_report
    from rewardsmith.store import KeyedStore

    raw = load_raw_spec(spec)
    reward = load_spec(raw).combined()
    profile = profile_spec(raw)
    chosen = select_attacks(attacks, profile.kinds)
    rows = read_records(data)
    if not rows:
        raise ValueError(f"{data}: no rows to audit on")
    digest = spec_digest(raw)
    planned_run = plan(rows, chosen, profile, digest, seed=seed)
    planned = planned_run.completions
    out = Path(out)
    scored_now = 0
    with KeyedStore(out / VERDICTS_FILE) as store:
        pending = [p for p in planned if p.key not in store]
        reused = len(planned) - len(pending)
        from tqdm import tqdm

        with tqdm(total=len(pending), desc="scoring attacks", unit="completion", disable=not progress) as bar:
            for batch in _batches(pending, BATCH):
                batch_rows = [rows[p.row] for p in batch]
                columns = {k: [r.get(k) for r in batch_rows] for k in batch_rows[0] if k != "completion"}
                results = reward.details([p.completion for p in batch], **columns)
                for item, result in zip(batch, results, strict=True):
                    store.append(
                        item.key,
                        {
                            "attack": item.attack,
                            "family": item.family,
                            "row": item.row,
                            "variant": item.variant,
                            "completion": item.completion,
                            "score": result.score,
                            "reason": result.reason,
                        },
                    )
                scored_now += len(batch)
                bar.update(len(batch))
        records = [store.get(p.key) for p in planned]
    run_info = {
        "spec": str(spec) if not isinstance(spec, (dict, list)) else "<inline>",
        "spec_digest": digest,
        "data": str(data),
        "n_rows": len(rows),
        "kinds": profile.kinds,
        "rewards": profile.reward_names,
        "threshold": threshold,
        "max_fp": max_fp,
        "min_control": min_control,
        "attacks_selected": [a.name for a in chosen],
        "dropped_right": planned_run.dropped_right,
        "scored_now": scored_now,
        "reused": reused,
    }
    descriptions = {a.name: a.description for a in chosen}
    metrics = build_metrics([r for r in records if r is not None], run_info, descriptions)
    metrics["completeness"] = measure_completeness(reward, rows, profile, threshold=threshold, seed=seed)
    if any(transcript_column(row) is not None for row in rows):
        metrics["trajectories"] = audit_trajectories(reward, rows, max_fp=max_fp)
    findings_path = None
    if search_budget > 0:
        found = search_exploits(reward, rows, profile, chosen, budget=search_budget, seed=seed, threshold=threshold)
        sealed = seal_findings(found.findings, rows, digest, threshold)
        findings_path = write_findings(out / FINDINGS_FILE, sealed)
        metrics["search"] = search_metrics(found, sealed, findings_path)
    metrics["grade"] = grade(metrics)
    paths = write_reward_report(out, metrics, [r for r in records if r is not None])
    if findings_path is not None:
        paths["findings"] = findings_path
    if "trajectories" in metrics:
        paths["trajectories"] = out / TRAJECTORIES_FILE
        paths["trajectories"].write_text(render_trajectories(metrics["trajectories"]), encoding="utf-8")
    return RewardAuditOutcome(metrics=metrics, paths=paths, scored_now=scored_now, reused=reused)
