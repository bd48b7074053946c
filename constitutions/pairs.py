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
import itertools
import json
import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rewardkit.constitutions.export import export_dataset
from rewardkit.constitutions.loader import constitution_hash
from rewardkit.constitutions.progress import RunProgress, describe_run
from rewardkit.constitutions.prompts import PromptItem, content_key, is_pairable
from rewardkit.constitutions.schema import Constitution, Principle
from rewardkit.judges.base import JudgeError, OrderVerdict, PairwiseJudgeProtocol, PairwiseVerdict
from rewardkit.judges.pairwise import judge_settings, same_judge_settings
from rewardkit.store import KeyedStore
from rewardkit.types import completion_text

#: Reason recorded for a prompt that has no two distinct non-empty candidates.
UNPAIRABLE = "fewer_than_two_distinct_candidates"
#: Kept pairs with ``|P(chosen better) - 0.5|`` below this are reported as low-confidence.
LOW_CONFIDENCE_BAND = 0.05


class PairsConfig(BaseModel):
    """Settings of a preference-pair run (all recorded in the run fingerprint)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    principles_per_comparison: int = Field(1, ge=1, description="principles sampled and averaged per pair")
    margin: float = Field(0.0, ge=0.0, lt=0.5, description="keep a pair only if |P(a better) - 0.5| > margin")
    chain_of_thought: bool = Field(False, description="labels come from reasoning; clamp them into cot_clamp")
    cot_clamp: tuple[float, float] = Field((0.4, 0.6), description="probability range for chain-of-thought labels")
    drop_flipped: bool = Field(False, description="drop pairs whose two presentation orders disagree")
    max_pairs_per_prompt: int | None = Field(None, ge=1, description="sample at most this many pairs per prompt")
    conversational: bool = Field(False, description="write prompt/chosen/rejected as chat messages")
    seed: int = 0
    concurrency: int = Field(1, ge=1, le=256, description="pairs judged at the same time")

    @model_validator(mode="after")
    def _clamp_range(self) -> PairsConfig:
        low, high = self.cot_clamp
        if not 0.0 <= low < 0.5 < high <= 1.0:
            raise ValueError(f"cot_clamp must satisfy 0 <= low < 0.5 < high <= 1, got {self.cot_clamp}")
        return self


@dataclass(frozen=True)
class PairTask:
    """One comparison to make: two candidates of one prompt, in input order."""

    order: tuple[int, int, int]
    key: str
    item: PromptItem
    response_a: str
    response_b: str


@dataclass(frozen=True)
class PromptDrop:
    """A prompt dropped before judging (``reason``), keyed like a pair so a resumed run skips it."""

    order: tuple[int, int, int]
    key: str
    item: PromptItem
    reason: str = UNPAIRABLE


@dataclass(frozen=True)
class Decision:
    """The outcome of one pair: ``winner`` is ``"a"``/``"b"`` when kept, else ``reason`` says why not."""

    winner: str | None
    reason: str
    prob_a: float | None
    verdicts: tuple[PairwiseVerdict, ...]
    principles: tuple[str, ...]

    @property
    def kept(self) -> bool:
        return self.winner in ("a", "b")


# -- pure functions ------------------------------------------------------------------------------


def pair_tasks(items: Sequence[PromptItem], config: PairsConfig) -> list[PairTask]:
    """All unordered pairs of distinct candidates per pairable prompt (optionally a seeded sample of them)."""
    tasks = []
    for item in items:
        if not is_pairable(item):
            continue
        candidates = list(dict.fromkeys(item.candidates))  # identical candidates make no pair
        pairs = list(itertools.combinations(range(len(candidates)), 2))
        if config.max_pairs_per_prompt is not None and len(pairs) > config.max_pairs_per_prompt:
            rng = random.Random(f"{config.seed}:pairs:{item.prompt_id}")
            pairs = sorted(rng.sample(pairs, config.max_pairs_per_prompt))
        for i, j in pairs:
            a, b = candidates[i], candidates[j]
            key = content_key("pair", item.prompt, a, b)
            tasks.append(PairTask(order=(item.index, i, j), key=key, item=item, response_a=a, response_b=b))
    return tasks


def prompt_drops(items: Sequence[PromptItem]) -> list[PromptDrop]:
    """The prompts that cannot make a single pair (see :func:`~rewardkit.constitutions.prompts.is_pairable`)."""
    drops = []
    for item in items:
        if not is_pairable(item):
            key = content_key("prompt-drop", item.prompt, list(item.candidates))
            drops.append(PromptDrop(order=(item.index, -1, -1), key=key, item=item))
    return drops


def planned_keys(items: Sequence[PromptItem], config: PairsConfig) -> set[str]:
    """Store keys of everything a run over ``items`` records: its pairs and its dropped prompts."""
    return {task.key for task in pair_tasks(items, config)} | {drop.key for drop in prompt_drops(items)}


def sample_principles(constitution: Constitution, key: str, seed: int, count: int) -> list[Principle]:
    """``count`` distinct principles, a pure function of ``(seed, key)`` (stable across runs and resumes)."""
    rng = random.Random(f"{seed}:principles:{key}")
    count = min(count, len(constitution.principles))
    return rng.sample(list(constitution.principles), count)


def clamp_verdict(verdict: PairwiseVerdict, low: float, high: float) -> PairwiseVerdict:
    """Clamp each order's probability into ``[low, high]`` and re-average (chain-of-thought labels)."""
    if verdict.prob_a is None:
        return verdict

    def clamp(p: float | None) -> float | None:
        return None if p is None else min(max(p, low), high)

    ab = verdict.ab.model_copy(update={"prob_first": clamp(verdict.ab.prob_first)})
    ba = verdict.ba.model_copy(update={"prob_first": clamp(verdict.ba.prob_first)})
    if ab.prob_first is not None and ba.prob_first is not None:
        prob_a = (ab.prob_first + (1.0 - ba.prob_first)) / 2.0
    else:
        prob_a = clamp(verdict.prob_a)
    return verdict.model_copy(update={"ab": ab, "ba": ba, "prob_a": prob_a})


def infrastructure_failure(verdict: PairwiseVerdict) -> str | None:
    """Why an order failed at the endpoint (not a verdict: the pair must be retried, not dropped), or ``None``."""
    errors = [order.reason or "judge endpoint error" for order in (verdict.ab, verdict.ba) if order.source == "error"]
    return "; ".join(errors) if errors else None


def is_abstain(verdict: PairwiseVerdict) -> bool:
    return verdict.abstained or verdict.prob_a is None


def decide(
    task: PairTask, verdicts: Sequence[PairwiseVerdict], principles: Sequence[str], config: PairsConfig
) -> Decision:
    """Combine the per-principle verdicts of one pair into keep (winner) or drop (reason)."""
    if config.chain_of_thought:
        low, high = config.cot_clamp
        verdicts = [clamp_verdict(v, low, high) for v in verdicts]
    verdicts = tuple(verdicts)
    principles = tuple(principles)
    usable = [v.prob_a for v in verdicts if not is_abstain(v)]
    if not usable:
        reasons = "; ".join(sorted({v.reason for v in verdicts if v.reason})) or "judge abstained"
        return Decision(None, f"abstain: {reasons}", None, verdicts, principles)
    prob_a = sum(usable) / len(usable)
    if config.drop_flipped and any(v.flipped for v in verdicts if not is_abstain(v)):
        return Decision(None, "flipped", prob_a, verdicts, principles)
    if abs(prob_a - 0.5) <= config.margin:
        return Decision(None, "tie", prob_a, verdicts, principles)
    return Decision("a" if prob_a > 0.5 else "b", "", prob_a, verdicts, principles)


def precheck(task: PairTask) -> str | None:
    """A reason to drop the pair without asking the judge, or ``None``."""
    if not task.response_a.strip() or not task.response_b.strip():
        return "empty"
    if task.response_a.strip() == task.response_b.strip():
        return "identical"
    return None


def _prob_chosen_by_position(verdict: PairwiseVerdict, chosen_is_a: bool) -> tuple[float | None, float | None]:
    """P(chosen better) when the chosen response was shown first, and when it was shown second."""

    def first(order: OrderVerdict) -> float | None:
        return order.prob_first

    def second(order: OrderVerdict) -> float | None:
        return None if order.prob_first is None else 1.0 - order.prob_first

    if chosen_is_a:
        return first(verdict.ab), second(verdict.ba)
    return first(verdict.ba), second(verdict.ab)


def decision_record(
    task: PairTask,
    decision: Decision,
    *,
    judge_model: str,
    constitution: Constitution,
    constitution_digest: str,
    conversational: bool,
) -> dict[str, Any]:
    """The store record of one finished pair: a DPO row with provenance, or a drop with its reason."""
    provenance = {
        "prompt_id": task.item.prompt_id,
        "principles": list(decision.principles),
        "judge_model": judge_model,
        "constitution": constitution.name,
        "constitution_hash": constitution_digest,
        "order": list(task.order),
    }
    if not decision.kept:
        return {
            "status": "dropped",
            "reason": decision.reason,
            "prompt": task.item.text,
            "response_a": task.response_a,
            "response_b": task.response_b,
            "prob_a": decision.prob_a,
            "abstained": decision.reason.startswith("abstain"),
            "flip": any(v.flipped for v in decision.verdicts if not is_abstain(v)),
            **provenance,
        }
    chosen_is_a = decision.winner == "a"
    chosen, rejected = (task.response_a, task.response_b) if chosen_is_a else (task.response_b, task.response_a)
    assert decision.prob_a is not None
    by_position = [_prob_chosen_by_position(v, chosen_is_a) for v in decision.verdicts]
    row: dict[str, Any] = {
        "status": "pair",
        "prompt": task.item.messages if conversational else task.item.text,
        "chosen": [{"role": "assistant", "content": chosen}] if conversational else chosen,
        "rejected": [{"role": "assistant", "content": rejected}] if conversational else rejected,
        "prob_chosen": decision.prob_a if chosen_is_a else 1.0 - decision.prob_a,
        "prob_chosen_shown_first": [first for first, _ in by_position],
        "prob_chosen_shown_second": [second for _, second in by_position],
        "abstained_principles": [
            p for p, v in zip(decision.principles, decision.verdicts, strict=True) if is_abstain(v)
        ],
        "flip": any(v.flipped for v in decision.verdicts if not is_abstain(v)),
        **provenance,
    }
    return row


def prompt_drop_record(
    drop: PromptDrop, *, judge_model: str, constitution: Constitution, constitution_digest: str
) -> dict[str, Any]:
    """The store record of a dropped prompt, with the columns of a dropped pair (no response was compared)."""
    return {
        "status": "dropped",
        "reason": drop.reason,
        "prompt": drop.item.text,
        "response_a": None,
        "response_b": None,
        "prob_a": None,
        "abstained": False,
        "flip": False,
        "candidates": list(drop.item.candidates),
        "prompt_id": drop.item.prompt_id,
        "principles": [],
        "judge_model": judge_model,
        "constitution": constitution.name,
        "constitution_hash": constitution_digest,
        "order": list(drop.order),
    }


# -- the pipeline --------------------------------------------------------------------------------


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
    judged: int = Field(0, description="pairs with a usable verdict (kept, tie or flipped)")
    reference_pairs: int = Field(0, description="kept pairs where the data marks one response as better")
    reference_agreed: int = 0
    outputs: dict[str, str] = Field(default_factory=dict)
    usage: str = ""

    def describe(self) -> str:
        details: list[str] = []
        if self.judged:
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
        )

    def record(self, task: PairTask, decision: Decision) -> dict[str, Any]:
        return decision_record(
            task,
            decision,
            judge_model=self.judge.model,
            constitution=self.constitution,
            constitution_digest=self.constitution_digest,
            conversational=self.config.conversational,
        )

    async def arun(
        self, items: Sequence[PromptItem], store: KeyedStore, progress: RunProgress | None = None
    ) -> PairsSummary:
        tasks = pair_tasks(items, self.config)
        drops = prompt_drops(items)
        todo = [task for task in tasks if task.key not in store]
        new_drops = [drop for drop in drops if drop.key not in store]
        resumed = len(tasks) - len(todo) + len(drops) - len(new_drops)
        summary = PairsSummary(pairs_total=len(tasks), resumed=resumed)
        if progress is not None:
            progress.skip(summary.resumed)
        for drop in new_drops:
            store.append(drop.key, self.drop_record(drop))
            if progress is not None:
                progress.add("dropped")
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
        return asyncio.run(self.arun(items, store, progress))

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


def export_pairs(
    store: KeyedStore, out_dir: str | Path, formats: Sequence[str], keys: Collection[str] | None = None
) -> dict[str, Path]:
    """Write ``train.{jsonl,parquet}`` (kept pairs, input order) and ``dropped.jsonl`` from the store.

    ``keys`` limits the export to the records of the current input (a store may hold those of a larger
    run; see :func:`planned_keys`). Dropped pairs and dropped prompts share one file, every row with
    every column.
    """
    records = sorted((r for r in store.records() if keys is None or r["key"] in keys), key=lambda r: tuple(r["order"]))
    kept = [{k: v for k, v in r.items() if k != "status"} for r in records if r["status"] == "pair"]
    dropped = [{k: v for k, v in r.items() if k != "status"} for r in records if r["status"] != "pair"]
    columns = list(dict.fromkeys(column for row in dropped for column in row))
    dropped = [{column: row.get(column) for column in columns} for row in dropped]
    written = export_dataset(kept, out_dir, "train", formats)
    written["dropped"] = export_dataset(dropped, out_dir, "dropped", ("jsonl",))["jsonl"]
    return written


def _log_failure(task: PairTask, exc: Exception) -> None:
    import logging

    logging.getLogger(__name__).warning(
        "pair %s (prompt %s) failed, will be retried: %s", task.key, task.item.prompt_id, exc
    )


def check_fingerprint(state_dir: Path, fingerprint: dict[str, Any]) -> None:
    """Record the run's settings, or refuse to resume a run made with different ones.

    A record written before the judge's method was part of its settings is resumed when the rest matches
    (:func:`~rewardkit.judges.pairwise.same_judge_settings`) and then rewritten with the method.
    """
    path = state_dir / "run.json"
    state_dir.mkdir(parents=True, exist_ok=True)
    if path.exists():
        previous = json.loads(path.read_text())
        if previous == fingerprint:
            return
        changed = sorted(
            key for key in set(previous) | set(fingerprint) if not _same_setting(key, previous, fingerprint)
        )
        if changed:
            raise ValueError(
                f"{state_dir.parent} holds a run made with different settings ({', '.join(changed)}); "
                "use another --out directory, or delete it to start over"
            )
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(fingerprint, indent=2, sort_keys=True))
    tmp.replace(path)


def _same_setting(key: str, previous: dict[str, Any], current: dict[str, Any]) -> bool:
    if key == "judge_settings" and key in previous and key in current:
        return same_judge_settings(previous[key], current[key])
    return previous.get(key) == current.get(key)
