"""Whose fault is a comparison that could not finish: the gold's or the answer's.

A reward signal is true or loudly absent, and a trainer ignores an absent one, so an answer that makes its own
check fail (``\\boxed{99999999999! - 1}``, brackets nested a thousand deep) must not escape its 0 by being
unscorable. The test is the gold alone: when the gold is read within budget, the answer is to blame and the
sample scores as wrong (``timeout_score``); when the gold itself cannot be read in time, the sample is unscorable.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rewardsmith import hard_timeout
from rewardsmith.hard_timeout import CallStatus, HardTimeoutPool
from rewardsmith.rewards.math.normalize import compare_key
from rewardsmith.rewards.math.values import Huge, Matrix, Opaque, Seq, Union, parse_value
from rewardsmith.rewards.math.verdict import Verdict


def gold_is_plain(gold_clean: str) -> bool:
    """True when the gold is made of values read exactly in linear time (numbers, intervals, tuples of them):
    nothing of it needs the symbolic stage, so an overrun on the pair is the answer's doing."""
    return _plain(parse_value(compare_key(gold_clean)))


def _plain(value: object) -> bool:
    if isinstance(value, (Opaque, Huge)):
        return False
    if isinstance(value, Seq):
        return all(_plain(item) for item in value.items)
    if isinstance(value, Union):
        return all(_plain(part) for part in value.parts)
    if isinstance(value, Matrix):
        return all(_plain(cell) for row in value.rows for cell in row)
    return True


def gold_is_readable(gold_clean: str) -> bool:
    """In a hard-timeout worker: math-verify reads the gold alone (what the symbolic stage does first)."""
    from rewardsmith.rewards.math.symbolic import parse_alone

    return parse_alone(gold_clean)


def blame_answer(verdict: Verdict) -> Verdict:
    """``verdict`` (a comparison that did not finish) charged to the answer."""
    why = f"{verdict.why}; the gold alone is read within budget, so the answer's own size or cost is to blame"
    return replace(verdict, why=why, answer_to_blame=True)


def gold_unreadable(verdict: Verdict, how: str) -> Verdict:
    """``verdict`` left unscorable: the gold alone could not be read in time either."""
    return replace(verdict, why=f"{verdict.why}; the gold alone {how}, so the gold is to blame")


_NOT_READ = "has no value math-verify reads, or one too large to evaluate"


def settle_failure(verdict: Verdict, gold_clean: str, pool: HardTimeoutPool, cache: Any) -> Verdict:
    """A comparison that ran and did not finish, charged to the answer or left unscorable (see the module).

    A gold made only of plain values is read in linear time, so it is never the cause; any other gold is read
    alone once (in a hard-timeout worker, or right here when this already is one), and the outcome is kept in
    ``cache`` (an LRU with ``get``/``put``) for the rest of its group.
    """
    if verdict.equal is not None or not verdict.failed:
        return verdict
    if gold_is_plain(gold_clean):
        return blame_answer(verdict)
    known = cache.get(("gold alone", gold_clean, None))
    if known is None:
        if hard_timeout._REPORT_CONN is not None:  # scoring inside a worker already: its own clock bounds this
            try:
                known = "read" if gold_is_readable(gold_clean) else _NOT_READ
            except Exception as exc:
                known = f"fails to be read ({type(exc).__name__})"
        else:
            (outcome,) = pool.map(gold_is_readable, [(gold_clean,)])
            if outcome.status is CallStatus.OK:
                known = "read" if outcome.value else _NOT_READ
            elif outcome.started:
                known = f"fails to be read ({outcome.status.value})"
            else:
                return verdict  # no worker to read it: the infrastructure's failure, unscorable as it was
        cache.put(("gold alone", gold_clean, None), known)
    return blame_answer(verdict) if known == "read" else gold_unreadable(verdict, known)
