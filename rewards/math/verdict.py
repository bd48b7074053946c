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
