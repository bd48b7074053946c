"""The ``instruction_following`` reward: the fraction of a row's verifiable instructions the response follows."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from rewardsmith.registry import register_reward
from rewardsmith.reward import ConfigError, Reward, RewardConfig
from rewardsmith.rewards.instructions import language
from rewardsmith.rewards.instructions.checkers import ConstraintError
from rewardsmith.rewards.instructions.constraints import (
    Constraint,
    constraints_from_ground_truth,
    constraints_from_ifeval,
)
from rewardsmith.rewards.instructions.text import after_thinking
from rewardsmith.types import RewardResult

logger = logging.getLogger(__name__)


class InstructionFollowingConfig(RewardConfig):
    mode: Literal["strict", "loose"] = Field(
        "strict", description="strict: the response as written; loose: IFEval's 8 variants, any one may pass"
    )
    aggregate: Literal["fraction", "all"] = Field(
        "fraction", description="fraction of instructions followed, or 1/0 only when every one is"
    )
    instruction_column: str = Field("instruction_id_list", description="IFEval column of instruction ids")
    kwargs_column: str = Field("kwargs", description="IFEval column of per-instruction arguments")
    ground_truth_column: str = Field("ground_truth", description="RLVR column (used when the IFEval one is absent)")
    strip_thinking: bool = Field(True, description="check only the text after the last </think>")
    language_checks: bool = Field(
        True,
        description="language and case instructions need langdetect (the 'instructions' extra); construction fails "
        "without it unless this is false, and then rows with those instructions are unscorable",
    )


def loose_variants(response: str) -> list[str]:
    """IFEval's loose forms: the response, without its first and/or last line, each also without ``*``."""
    lines = response.split("\n")
    cut = ["\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()]
    return [response, response.replace("*", ""), *cut, *(c.replace("*", "") for c in cut)]


@register_reward("instruction_following")
class InstructionFollowing(Reward[InstructionFollowingConfig]):
    """Verifiable instruction following (IFEval / RLVR): score = instructions followed / instructions.

    Each row carries its constraints as Google IFEval's ``instruction_id_list`` + ``kwargs`` columns or an RLVR
    ``ground_truth`` (single ``func_name`` constraint, or IFEval-form ids and kwargs). ``mode="strict"`` checks the
    response as written; ``mode="loose"`` passes an instruction when any of IFEval's eight variants does (first
    or last line dropped, ``*`` removed). ``aggregate="all"`` gives 1.0 only when every instruction is followed.
    A blank response follows nothing. An unknown instruction or a bad argument makes the row unscorable (``None``)
    with the reason; the reason of a scored row names every failed instruction. Every check is linear in the
    response length.

    >>> r = InstructionFollowing()
    >>> r(["hello world"], instruction_id_list=[["punctuation:no_comma", "startend:quotation"]], kwargs=[[{}, {}]])
    [0.5]
    """

    name = "instruction_following"

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        super().__init__(config, **overrides)
        if self.config.language_checks:
            try:
                language.require()
            except language.LanguageUnavailable:
                raise ConfigError(
                    "instruction_following checks the language and case instructions with langdetect, which is not "
                    "installed: pip install 'rewardsmith[instructions]' (or set language_checks: false, and rows with "
                    "those instructions are unscorable)"
                ) from None

    def score_one(self, completion: str, row: Mapping[str, Any]) -> RewardResult:
        try:
            constraints = self._constraints(row)
        except ConstraintError as exc:
            return RewardResult.unscorable(str(exc))
        response = after_thinking(completion) if self.config.strip_thinking else completion
        variants = loose_variants(response) if self.config.mode == "loose" else [response]
        failed: list[str] = []
        for constraint in constraints:
            try:
                followed = any(v.strip() and constraint.check(v) for v in variants)
            except Exception as exc:  # a checker bug costs this row, never the batch
                logger.debug("instruction %s failed", constraint.id, exc_info=True)
                return RewardResult.unscorable(f"{constraint.id}: internal error: {type(exc).__name__}: {exc}")
            if not followed:
                failed.append(constraint.id)
        total = len(constraints)
        followed_count = total - len(failed)
        score = (0.0 if failed else 1.0) if self.config.aggregate == "all" else followed_count / total
        reason = f"{followed_count}/{total} instructions followed ({self.config.mode})"
        if failed:
            reason += "; failed: " + ", ".join(failed)
        return RewardResult(score=score, reason=reason, failed=failed)

    def _constraints(self, row: Mapping[str, Any]) -> list[Constraint]:
        if row.get(self.config.instruction_column) is not None:
            return constraints_from_ifeval(row[self.config.instruction_column], row.get(self.config.kwargs_column))
        if row.get(self.config.ground_truth_column) is not None:
            return constraints_from_ground_truth(row[self.config.ground_truth_column])
        arrived = ", ".join(sorted(str(c) for c in row)) or "none"
        raise ConstraintError(
            f"row has no {self.config.instruction_column!r} or {self.config.ground_truth_column!r} column: set "
            f"instruction_column (IFEval) or ground_truth_column (RLVR) to the column that holds the constraints "
            f"(columns that arrived: {arrived})"
        )
