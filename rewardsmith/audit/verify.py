"""Gold verification: rewardsmith's own verifiers decide which response of each item is right.

Each item's :class:`GoldCheck` names a registered reward and the dataset columns it needs; both
responses are scored and the gold must score strictly higher. A verifier that is not installed, or
that cannot score a response (``None``), leaves the item *unverified* — never silently verified.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from rewardsmith.heldout.sets import AuditItem, GoldCheck
from rewardsmith.reward import ConfigError

Status = Literal["verified", "contradicted", "unverified", "unchecked"]


class GoldVerdict(BaseModel):
    item_id: str
    status: Status
    reward: str | None = None
    gold_score: float | None = None
    wrong_score: float | None = None
    reason: str = ""


def verify_gold(items: Sequence[AuditItem]) -> list[GoldVerdict]:
    """Score gold and wrong response of every checkable item with its verifier (batched per verifier)."""
    from rewardsmith.registry import get_reward

    out: dict[int, GoldVerdict] = {}
    groups: dict[tuple[str, str], list[tuple[int, AuditItem, GoldCheck]]] = {}
    for index, item in enumerate(items):
        if item.check is None or item.gold == "tie":
            out[index] = GoldVerdict(item_id=item.id, status="unchecked", reason="no verifier for this item")
            continue
        key = (item.check.reward, json.dumps(item.check.config, sort_keys=True))
        groups.setdefault(key, []).append((index, item, item.check))
    for (name, config_json), group in groups.items():
        try:
            reward = get_reward(name, json.loads(config_json))
        except ConfigError as exc:
            for index, item, _ in group:
                out[index] = GoldVerdict(item_id=item.id, status="unverified", reward=name, reason=str(exc))
            continue
        completions: list[str] = []
        columns: dict[str, list] = {c: [] for _, _, check in group for c in check.columns}
        for _, item, check in group:
            completions += [item.gold_response or "", _wrong_response(item)]
            for column, values in columns.items():
                values += [check.columns.get(column)] * 2
        results = reward.details(completions, prompts=[it.prompt for _, it, _ in group for _ in (0, 1)], **columns)
        for k, (index, item, _) in enumerate(group):
            gold, wrong = results[2 * k], results[2 * k + 1]
            out[index] = _decide(item.id, name, gold.score, wrong.score, gold.reason, wrong.reason)
    return [out[index] for index in range(len(items))]


def _wrong_response(item: AuditItem) -> str:
    return item.response_b if item.gold == "a" else item.response_a


def _decide(
    item_id: str, name: str, gold: float | None, wrong: float | None, why_gold: str, why_wrong: str
) -> GoldVerdict:
    common = {"item_id": item_id, "reward": name, "gold_score": gold, "wrong_score": wrong}
    if gold is None or wrong is None:
        return GoldVerdict(status="unverified", reason=f"unscorable: gold: {why_gold}; wrong: {why_wrong}", **common)
    if gold > wrong:
        return GoldVerdict(status="verified", reason=f"{name}: gold {gold:g} > wrong {wrong:g}", **common)
    return GoldVerdict(status="contradicted", reason=f"{name}: gold {gold:g} <= wrong {wrong:g} ({why_gold})", **common)


def summarize(verdicts: Sequence[GoldVerdict]) -> dict[str, int]:
    counts = Counter(v.status for v in verdicts)
    return {s: counts.get(s, 0) for s in ("verified", "contradicted", "unverified", "unchecked")}
