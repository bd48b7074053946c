"""RL-CAI / RLAIF preference pairs: judge candidate pairs under sampled principles, keep confident ones.

For every pair of distinct candidates of a prompt:

1. sample ``principles_per_comparison`` principles of the constitution without replacement, seeded by
   ``(seed, pair key)`` so a resumed run samples exactly what an uninterrupted one would;
2. ask the pairwise judge each principle's comparison question; the judge scores both presentation
   orders and averages them into ``P(a better)`` (soft labels from option log-probs);
3. with chain-of-thought labels (which collapse to 0/1) clamp each order's probability into
   ``cot_clamp`` (default 40-60 %) before averaging, as Constitutional AI does;
4. average ``P(a better)`` over the principles that did not abstain (ensembling);
5. keep the pair only if ``|P - 0.5| > margin``: chosen = the preferred response. Otherwise it is
   dropped with its reason: ``tie``, ``abstain`` (every principle abstained), ``flipped`` (when
   ``drop_flipped``), ``identical`` or ``empty`` responses. ``chosen == rejected`` never happens.

A prompt without two distinct non-empty candidates makes no pair: it is dropped as a whole with the
reason ``fewer_than_two_distinct_candidates`` (one bad row never stops a run). Kept pairs whose
``|P - 0.5| < LOW_CONFIDENCE_BAND`` are counted in the summary: with the default margin 0 they are
near coin flips that still become training pairs.

Every finished pair or dropped prompt is appended to a :class:`KeyedStore` before the next one, so a
killed run resumes where it stopped. Judge failures (:class:`JudgeError`) are not recorded: they are
counted as ``failed`` and retried by the next run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from rewardsmith.bridge import run_sync
from rewardsmith.constitutions.loader import constitution_hash
from rewardsmith.constitutions.pair_building import (
    LOW_CONFIDENCE_BAND,
    UNPAIRABLE,
    PairsConfig,
    PairTask,
    PromptDrop,
    pair_tasks,
    planned_keys,
    prompt_drops,
    sample_principles,
)
from rewardsmith.constitutions.pair_labels import (
    Decision,
    clamp_verdict,
    decide,
    infrastructure_failure,
    is_abstain,
    precheck,
)
from rewardsmith.constitutions.pair_records import check_fingerprint, decision_record, export_pairs, prompt_drop_record
from rewardsmith.constitutions.progress import RunProgress, describe_run
from rewardsmith.constitutions.prompts import PromptItem
from rewardsmith.constitutions.schema import Constitution
from rewardsmith.judges.base import JudgeError, PairwiseJudgeProtocol
from rewardsmith.judges.clients.provenance import judged_by
from rewardsmith.judges.pairwise import judge_settings
from rewardsmith.store import KeyedStore
from rewardsmith.types import completion_text

# Building, labelling and records live in their own modules; the pipeline's users import them from here too.
__all__ = [
    "LOW_CONFIDENCE_BAND",
    "UNPAIRABLE",
    "Decision",
    "PairTask",
    "PairsConfig",
    "PairsPipeline",
    "PairsSummary",
    "PromptDrop",
    "check_fingerprint",
    "clamp_verdict",
    "decide",
    "decision_record",
    "export_pairs",
    "infrastructure_failure",
    "is_abstain",
    "pair_tasks",
    "planned_keys",
    "precheck",
    "prompt_drop_record",
    "prompt_drops",
    "sample_principles",
]


class PairsSummary(BaseModel):
    """What a run did; ``failed`` pairs were not recorded and a rerun retries them."""

    pairs_total: int = 0
    kept: int = 0
    dropped: dict[str, int] = Field(default_factory=dict)
    prompts_dropped: dict[str, int] = Field(
        default_factory=dict, description="prompts that made no pair, by reason (in dropped.jsonl too)"
    )
    low_confidence_kept: int = Field(
        0, description="kept pairs with |P(chosen better) - 0.5| < low_confidence_band: close to a coin flip"
    )
    low_confidence_band: float = LOW_CONFIDENCE_BAND
    failed: int = 0
    resumed: int = 0
    flipped: int = Field(0, description="judged pairs whose two presentation orders picked different responses")
    order_free: bool = Field(False, description="the judge scores each response alone: no order to flip")
    judged: int = Field(0, description="pairs with a usable verdict (kept, tie or flipped)")
    reference_pairs: int = Field(0, description="kept pairs where the data marks one response as better")
    reference_agreed: int = 0
    outputs: dict[str, str] = Field(default_factory=dict)
    usage: str = ""

    def describe(self) -> str:
        details: list[str] = []
        if self.judged and self.order_free:
            details.append(
                "position flips: not measurable - this judge scores each response alone, so its two orders cannot "
                "disagree (0 flips by construction, not a sign of consistency)"
            )
        elif self.judged:
            rate = self.flipped / self.judged
            details.append(
                f"position flips: {self.flipped}/{self.judged} ({rate:.0%})"
                + (
                    " - the judge mostly follows the position, not the content: use a stronger judge, "
                    "--drop-flipped or --margin"
                    if rate > 0.5
                    else ""
                )
            )
        if self.kept:
            share = self.low_confidence_kept / self.kept
            details.append(
                f"low-confidence kept pairs (|P - 0.5| < {self.low_confidence_band:g}): "
                f"{self.low_confidence_kept}/{self.kept} ({share:.0%})"
                + (
                    f" - near coin flips kept as training pairs: --margin {self.low_confidence_band:g} drops them"
                    if self.low_confidence_kept
                    else ""
                )
            )
        if self.prompts_dropped:
            counts = ", ".join(f"{reason} {count}" for reason, count in sorted(self.prompts_dropped.items()))
            details.append(f"prompts dropped before judging (see dropped.jsonl): {counts}")
        if self.reference_pairs:
            details.append(
                f"agreement with the data's 'better' marks: {self.reference_agreed}/{self.reference_pairs} "
                f"({self.reference_agreed / self.reference_pairs:.0%})"
            )
        return describe_run(self, f"pairs: {self.pairs_total} compared, {self.kept} kept, dropped: ", details)


class PairsPipeline:
    """Judge pairs into a DPO dataset. ``judge`` is any :class:`PairwiseJudgeProtocol`."""

    def __init__(
        self, judge: PairwiseJudgeProtocol, constitution: Constitution, config: PairsConfig | None = None
    ) -> None:
        self.judge = judge
        self.constitution = constitution
        self.config = config or PairsConfig()
        self.constitution_digest = constitution_hash(constitution)

    def fingerprint(self) -> dict[str, Any]:
        """Settings that must match for a rerun to resume (rather than mix two different runs)."""
        return {
            "pipeline": "rlaif-pairs",
            "judge_model": self.judge.model,
            "judge_settings": judge_settings(self.judge),
            "constitution": self.constitution.name,
            "constitution_hash": self.constitution_digest,
            "config": self.config.model_dump(mode="json", exclude={"concurrency"}),
        }

    async def judge_task(self, task: PairTask) -> Decision:
        principles = sample_principles(
            self.constitution, task.key, self.config.seed, self.config.principles_per_comparison
        )
        verdicts = await asyncio.gather(
            *(
                self.judge.ajudge(task.item.text, task.response_a, task.response_b, question=principle.comparison)
                for principle in principles
            )
        )
        for verdict in verdicts:
            failure = infrastructure_failure(verdict)
            if failure is not None:
                raise JudgeError(failure)
        return decide(task, verdicts, [p.id for p in principles], self.config)

    def drop_record(self, drop: PromptDrop) -> dict[str, Any]:
        return prompt_drop_record(
            drop,
            judge_model=self.judge.model,
            constitution=self.constitution,
            constitution_digest=self.constitution_digest,
            judge_transport=judged_by(self.judge)["transport"],
        )

    def record(self, task: PairTask, decision: Decision) -> dict[str, Any]:
        return decision_record(
            task,
            decision,
            judge_model=self.judge.model,
            constitution=self.constitution,
            constitution_digest=self.constitution_digest,
            conversational=self.config.conversational,
            judge_transport=judged_by(self.judge)["transport"],
        )

    async def arun(
        self, items: Sequence[PromptItem], store: KeyedStore, progress: RunProgress | None = None
    ) -> PairsSummary:
        tasks = pair_tasks(items, self.config)
        drops = prompt_drops(items)
        todo = [task for task in tasks if task.key not in store]
        new_drops = [drop for drop in drops if drop.key not in store]
        resumed = len(tasks) - len(todo) + len(drops) - len(new_drops)
        summary = PairsSummary(
            pairs_total=len(tasks), resumed=resumed, order_free=bool(getattr(self.judge, "order_free", False))
        )
        if progress is not None:
            progress.skip(summary.resumed)
        for drop in new_drops:
            store.append(drop.key, self.drop_record(drop))
            if progress is not None:
                progress.add("dropped")
        if todo:  # a dead endpoint or a refused key: one line now, not one failure per pair after its retries
            from rewardsmith.audit.preflight import acheck_judge

            await acheck_judge(self.judge)
        semaphore = asyncio.Semaphore(self.config.concurrency)

        async def one(task: PairTask) -> None:
            async with semaphore:
                reason = precheck(task)
                if reason is not None:
                    decision = Decision(None, reason, None, (), ())
                else:
                    try:
                        decision = await self.judge_task(task)
                    except JudgeError as exc:
                        summary.failed += 1
                        if progress is not None:
                            progress.add("failed")
                        _log_failure(task, exc)
                        return
                # One event loop, one writer: appends never interleave.
                store.append(task.key, self.record(task, decision))
                if progress is not None:
                    progress.add(
                        "done"
                        if decision.kept
                        else ("abstained" if decision.reason.startswith("abstain") else "dropped")
                    )

        await asyncio.gather(*(one(task) for task in todo))
        return self._tally(tasks, drops, store, summary)

    def run(self, items: Sequence[PromptItem], store: KeyedStore, progress: RunProgress | None = None) -> PairsSummary:
        return run_sync(self.arun(items, store, progress), close=getattr(self.judge, "client", None))

    @staticmethod
    def _tally(
        tasks: Sequence[PairTask], drops: Sequence[PromptDrop], store: KeyedStore, summary: PairsSummary
    ) -> PairsSummary:
        for drop in drops:
            record = store.get(drop.key)
            if record is not None:
                summary.prompts_dropped[record["reason"]] = summary.prompts_dropped.get(record["reason"], 0) + 1
        for task in tasks:
            record = store.get(task.key)
            if record is None:
                continue
            if record["status"] == "pair":
                summary.kept += 1
                summary.judged += 1
                summary.flipped += bool(record["flip"])
                summary.low_confidence_kept += abs(record["prob_chosen"] - 0.5) < summary.low_confidence_band
                reference = task.item.reference
                if reference is not None and reference in (task.response_a, task.response_b):
                    summary.reference_pairs += 1
                    summary.reference_agreed += completion_text(record["chosen"]) == reference
            else:
                reason = record["reason"].split(":", 1)[0]
                summary.dropped[reason] = summary.dropped.get(reason, 0) + 1
                if reason in ("tie", "flipped"):
                    summary.judged += 1
                    summary.flipped += bool(record.get("flip"))
        return summary


def _log_failure(task: PairTask, exc: Exception) -> None:
    import logging

    logging.getLogger(__name__).warning(
        "pair %s (prompt %s) failed, will be retried: %s", task.key, task.item.prompt_id, exc
    )
