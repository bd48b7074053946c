"""The outcome of comparing one answer with its gold, shared by the fast and the symbolic stage."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Verdict:
    """``equal`` is True/False when decided, ``None`` when this stage cannot decide; ``why`` says how."""

    equal: bool | None
    why: str
    timed_out: bool = False  # the comparison itself overran its hard timeout
    #: When undecided: the (gold, answer) LaTeX parts the symbolic stage must compare, one pair each.
    parts: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    #: The symbolic stage ran this comparison and it did not finish (an overrun, an error, a crash): unlike a
    #: worker that never started, something in the pair made checking fail, the gold's or the answer's.
    failed: bool = False
    #: The gold alone is read within budget, so the answer's own size, depth or cost made checking fail.
    answer_to_blame: bool = False
