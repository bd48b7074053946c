"""Judge ensembles: several pairwise judges (models, prompts, or reward models) combined into one verdict.

Each member judges the pair (every member in both orders, as members do on their own); then

- ``method="mean"``: ``prob_a`` = mean of the members' ``prob_a`` (mean probability);
- ``method="majority"``: each member votes for its winner (a member at exactly 0.5 votes for neither);
  ``prob_a`` = share of the decisive votes that went to ``a``, 0.5 when nobody was decisive.

The members judge together (concurrently), from sync code as from a loop. Abstain rules: a member that abstains or
fails (raises) is left out; with fewer than ``min_answered`` members answering
the ensemble abstains (``prob_a is None``), never a default winner. ``flipped`` is set when any answering member
flipped between orders. The members' own verdicts ride along in :class:`EnsembleVerdict` ``.members``, so an
audit of the ensemble reports each member too (:func:`member_verdicts`).

>>> ensemble = EnsembleJudge([PairwiseJudge(client_a), PairwiseJudge(client_b)])  # doctest: +SKIP
>>> ensemble.judge("What is 2+2?", "4", "5").prob_a  # doctest: +SKIP
0.81
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from rewardsmith.judges.base import OrderVerdict, PairwiseJudgeProtocol, PairwiseVerdict
from rewardsmith.judges.strategy import JudgeStrategy


class EnsembleVerdict(PairwiseVerdict):
    members: list[PairwiseVerdict] = Field(default_factory=list, description="each member's verdict, in order")


class EnsembleJudge(JudgeStrategy):
    """Several :class:`PairwiseJudgeProtocol` judges as one; implements the protocol itself."""

    def __init__(
        self,
        members: Sequence[PairwiseJudgeProtocol],
        *,
        method: Literal["mean", "majority"] = "mean",
        min_answered: int = 1,
    ) -> None:
        if not members:
            raise ValueError("an ensemble needs at least one member")
        if method not in ("mean", "majority"):
            raise ValueError(f"method must be 'mean' or 'majority', got {method!r}")
        if not 1 <= min_answered <= len(members):
            raise ValueError(f"min_answered must be in 1..{len(members)}, got {min_answered}")
        self.members = list(members)
        self.method = method
        self.min_answered = min_answered
        self._clients = MemberClients(self.members)

    @property
    def model(self) -> str:
        return f"ensemble[{self.method}]({', '.join(m.model for m in self.members)})"

    def loop_client(self) -> MemberClients:
        return self._clients

    async def ajudge(
        self, prompt: str, response_a: str, response_b: str, *, question: str | None = None
    ) -> EnsembleVerdict:
        verdicts = await asyncio.gather(
            *(m.ajudge(prompt, response_a, response_b, question=question) for m in self.members),
            return_exceptions=True,
        )
        members = [
            v if isinstance(v, PairwiseVerdict) else _failed(m.model, v)
            for m, v in zip(self.members, verdicts, strict=True)
        ]
        return combine_members(
            members, method=self.method, min_answered=self.min_answered, principle=question, model=self.model
        )


class MemberClients:
    """The members' chat clients as one: a sync call closes each one's connections with the loop it ran on."""

    def __init__(self, members: Sequence[object]) -> None:
        self.members = members

    async def aclose(self) -> None:
        for member in self.members:
            client = member.loop_client() if isinstance(member, JudgeStrategy) else getattr(member, "client", None)
            aclose = getattr(client, "aclose", None)
            if aclose is not None:
                await aclose()


def _failed(model: str, exc: BaseException) -> PairwiseVerdict:
    order = OrderVerdict(source="error", reason=f"{type(exc).__name__}: {exc}")
    return PairwiseVerdict(prob_a=None, ab=order, ba=order, abstained=True, reason=f"abstain ({exc})", model=model)


def combine_members(
    members: Sequence[PairwiseVerdict],
    *,
    method: Literal["mean", "majority"] = "mean",
    min_answered: int = 1,
    principle: str | None = None,
    model: str = "",
) -> EnsembleVerdict:
    """The members' verdicts -> one ensemble verdict (see the module docstring for the rules).

    Each presentation order is combined on its own (the members' A-first answers into the ensemble's A-first
    answer, likewise B-first), so the audit still sees the ensemble's position bias.
    """
    answered = [v for v in members if v.prob_a is not None]
    summary = ", ".join("abstain" if v.prob_a is None else f"{v.prob_a:.2f}" for v in members)
    common: dict[str, Any] = {"members": list(members), "principle": principle, "model": model}
    if len(answered) < min_answered:
        order = OrderVerdict(source="abstain")
        reason = f"abstain ({len(answered)}/{len(members)} members answered, {min_answered} needed; {summary})"
        return EnsembleVerdict(prob_a=None, ab=order, ba=order, abstained=True, reason=reason, **common)
    ab = _combine_order([v.ab for v in answered], method)
    ba = _combine_order([v.ba for v in answered], method)
    if method == "mean":
        probs = [v.prob_a for v in answered if v.prob_a is not None]  # every answered member's
        prob_a = sum(probs) / len(probs)
    else:
        votes = [v.winner for v in answered if v.winner in ("a", "b")]
        prob_a = votes.count("a") / len(votes) if votes else 0.5
    winner_ab = {"first": "a", "second": "b"}.get(ab.choice or "")
    winner_ba = {"first": "b", "second": "a"}.get(ba.choice or "")
    flipped = winner_ab is not None and winner_ba is not None and winner_ab != winner_ba
    reason = f"{method} of {len(answered)}/{len(members)} members ({summary})"
    return EnsembleVerdict(
        prob_a=min(1.0, max(0.0, prob_a)), ab=ab, ba=ba, flipped=flipped, abstained=False, reason=reason, **common
    )


def _combine_order(orders: Sequence[OrderVerdict], method: str) -> OrderVerdict:
    """One presentation order across members: mean ``P(first)``, or the share of members that chose first."""
    if method == "mean":
        probs = [o.prob_first for o in orders if o.prob_first is not None]
        if not probs:
            return OrderVerdict(source="abstain", reason="no member answered this order")
        p_first = sum(probs) / len(probs)
        source = "logprobs"
    else:
        choices = [o.choice for o in orders if o.choice is not None]
        if not choices:
            return OrderVerdict(source="abstain", reason="no member chose in this order")
        p_first = choices.count("first") / len(choices)
        source = "parsed"
    choice = "first" if p_first > 0.5 else "second" if p_first < 0.5 else None
    return OrderVerdict(prob_first=p_first, choice=choice, source=source)


def member_verdicts(
    verdicts: Mapping[tuple[str, str], PairwiseVerdict | Mapping[str, Any]], index: int
) -> dict[tuple[str, str], PairwiseVerdict]:
    """One member's verdicts out of an ensemble run's verdicts (as the audit keys them), to audit it alone."""
    out: dict[tuple[str, str], PairwiseVerdict] = {}
    for key, verdict in verdicts.items():
        members = verdict.get("members") if isinstance(verdict, Mapping) else getattr(verdict, "members", None)
        if members is None or index >= len(members):
            raise ValueError(f"verdict {key} carries no member {index}")
        member = members[index]
        out[key] = member if isinstance(member, PairwiseVerdict) else PairwiseVerdict.model_validate(member)
    return out
