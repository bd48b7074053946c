"""RLAIF pair records: the store rows of finished pairs and dropped prompts, the run fingerprint, the DPO export."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from rewardsmith.constitutions.export import export_dataset
from rewardsmith.constitutions.pair_building import PairTask, PromptDrop
from rewardsmith.constitutions.pair_labels import Decision, is_abstain
from rewardsmith.constitutions.schema import Constitution
from rewardsmith.judges.base import OrderVerdict, PairwiseVerdict
from rewardsmith.judges.pairwise import same_judge_settings
from rewardsmith.store import KeyedStore

#: The key of ``run.json``'s per-run transport history.
JUDGED_BY = "judged_by"


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
    judge_transport: str | None = None,
) -> dict[str, Any]:
    """The store record of one finished pair: a DPO row with provenance, or a drop with its reason.

    ``judge_model`` and ``judge_transport`` name what judged this pair when it was recorded: after the embedded
    judge's server crashed, the in-process fallback's model and transport, not the server's.
    """
    provenance = {
        "prompt_id": task.item.prompt_id,
        "principles": list(decision.principles),
        "judge_model": judge_model,
        "judge_transport": judge_transport,
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
    drop: PromptDrop,
    *,
    judge_model: str,
    constitution: Constitution,
    constitution_digest: str,
    judge_transport: str | None = None,
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
        "judge_transport": judge_transport,
        "constitution": constitution.name,
        "constitution_hash": constitution_digest,
        "order": list(drop.order),
    }


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


def check_fingerprint(state_dir: Path, fingerprint: dict[str, Any]) -> None:
    """Record the run's settings, or refuse to resume a run made with different ones.

    A record written before the judge's method was part of its settings is resumed when the rest matches
    (:func:`~rewardsmith.judges.pairwise.same_judge_settings`) and then rewritten with the method. The runs'
    ``judged_by`` history (:func:`record_judged_by`) is a record, not a setting: it is kept, never compared.
    """
    path = state_dir / "run.json"
    state_dir.mkdir(parents=True, exist_ok=True)
    if path.exists():
        previous = json.loads(path.read_text())
        history = previous.pop(JUDGED_BY, None)
        if history is not None:
            fingerprint = {**fingerprint, JUDGED_BY: history}
            previous[JUDGED_BY] = history
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


def record_judged_by(state_dir: Path, record: dict[str, Any]) -> None:
    """Append the transport that judged this run to ``run.json`` (``judged_by``): the server, or the fallback and why.

    ``judge_model`` in the fingerprint is the judge asked for (a rerun must match it); this says which one answered.
    """
    path = state_dir / "run.json"
    run = json.loads(path.read_text())
    run[JUDGED_BY] = [*run.get(JUDGED_BY, []), record]
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(run, indent=2, sort_keys=True))
    tmp.replace(path)


def _same_setting(key: str, previous: dict[str, Any], current: dict[str, Any]) -> bool:
    if key == "judge_settings" and key in previous and key in current:
        return same_judge_settings(previous[key], current[key])
    return previous.get(key) == current.get(key)
