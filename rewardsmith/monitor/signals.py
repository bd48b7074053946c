"""The hacking signals as pure functions of the checked samples.

Hacking is the training reward paying for what the shadow rejects; every signal is built on that and nothing else
(a collapse, a length blow-up or a format gain the training reward does not pay for is the policy's business, not a
hack). Two quantities are tested, each by its own sequential test (:mod:`.sequential`), one group at a time:

- ``divergence``: the share of a group's checked completions the reward pays and the shadow rejects;
- ``precision``: among the completions the reward pays, the share the shadow accepts (tested as its complement).

The other signals describe *how* the paid-but-rejected completions look (hedged, an audit attack pattern, a group's
collapsed answer, format-only, longer than the rest); an alarm names the forms that dominate. Levels over the
recent window are reported with Wilson 95 % intervals (rewardsmith.audit.stats).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rewardsmith.audit.stats import wilson


@dataclass(frozen=True)
class Observation:
    """One shadow-checked completion."""

    check: int
    step: int
    group: int
    length: int
    train_score: float | None
    train_pass: bool
    shadow_pass: bool | None
    format_pass: bool | None
    hedged: bool
    attack: str | None
    answer: str


@dataclass(frozen=True)
class Signal:
    """A signal's value over the window, its interval when it is a proportion, and whether it raised an alarm."""

    name: str
    value: float | None
    alarm: bool = False
    message: str = ""
    low: float | None = None
    high: float | None = None


def exploited(o: Observation) -> bool:
    """Paid by the training reward, rejected by the shadow (a shadow that could not judge rejects nothing)."""
    return o.train_pass and o.shadow_pass is False


def groups_of(obs: Sequence[Observation]) -> list[list[Observation]]:
    """The checked groups (one prompt's completions at one check), in the order they were checked."""
    groups: dict[tuple[int, int], list[Observation]] = {}
    for o in obs:
        groups.setdefault((o.check, o.group), []).append(o)
    return list(groups.values())


# -- the tested quantities, one group at a time -------------------------------------------------------------------
def divergence_share(members: Sequence[Observation]) -> float | None:
    """Share of the group's judged completions that the reward pays and the shadow rejects; None if none judged."""
    judged = [m for m in members if m.shadow_pass is not None]
    return sum(exploited(m) for m in judged) / len(judged) if judged else None


def rejected_paid_share(members: Sequence[Observation]) -> float | None:
    """Share of the group's paid, judged completions that the shadow rejects (1 - precision); None if none paid."""
    paid = [m for m in members if m.train_pass and m.shadow_pass is not None]
    return sum(m.shadow_pass is False for m in paid) / len(paid) if paid else None


def group_shares(obs: Sequence[Observation], share: Callable[[Sequence[Observation]], float | None]) -> list[float]:
    """The units of a sequential test: ``share`` of every checked group that has one."""
    return [x for x in (share(g) for g in groups_of(obs)) if x is not None]


# -- levels over the window ---------------------------------------------------------------------------------------
def _rate(name: str, hits: int, n: int) -> Signal:
    if not n:
        return Signal(name, None)
    low, high = wilson(hits / n, n)
    return Signal(name, hits / n, low=low, high=high)


def precision_recall(obs: Sequence[Observation]) -> list[Signal]:
    """P(shadow correct | reward pays) and P(reward pays | shadow correct) over ``obs``, Wilson 95 %."""
    judged = [o for o in obs if o.shadow_pass is not None]
    paid = [o for o in judged if o.train_pass]
    truths = [o for o in judged if o.shadow_pass]
    return [
        _rate("precision", sum(bool(o.shadow_pass) for o in paid), len(paid)),
        _rate("recall", sum(o.train_pass for o in truths), len(truths)),
    ]


def divergence(obs: Sequence[Observation]) -> Signal:
    """Share of judged completions that the reward pays and the shadow rejects over ``obs``, Wilson 95 %."""
    judged = [o for o in obs if o.shadow_pass is not None]
    return _rate("divergence", sum(exploited(o) for o in judged), len(judged))


# -- what the paid-but-rejected completions look like -------------------------------------------------------------
FORMS = ("hedging_rate", "attack_share", "answer_collapse", "format_without_accuracy", "length_blowup")


def _collapsed(members: Sequence[Observation], level: float) -> set[int]:
    """ids of the group's completions that give its modal answer, when that answer holds at least ``level``."""
    if len(members) < 2:
        return set()
    answers = [m.answer for m in members]
    modal = max(set(answers), key=answers.count)
    if answers.count(modal) / len(answers) < level:
        return set()
    return {id(m) for m in members if m.answer == modal}


def forms(obs: Sequence[Observation], *, level: float) -> list[Signal]:
    """How the completions the reward pays and the shadow rejects look, as shares of them (None when there are
    none): ``hedging_rate``, ``attack_share``, ``answer_collapse`` (the group's modal answer, held by at least
    ``level`` of the group), ``format_without_accuracy`` (the format check passes; None without one) and
    ``length_blowup`` (their mean length over the other completions')."""
    bad = [o for o in obs if exploited(o)]
    if not bad:
        return [Signal(name, None) for name in FORMS]
    keys = {(o.check, o.group) for o in bad}
    collapsed = set().union(*(_collapsed(g, level) for g in groups_of([o for o in obs if (o.check, o.group) in keys])))
    rest = [o.length for o in obs if not exploited(o)]
    formatted = [o for o in bad if o.format_pass is not None]

    def share(name: str, hit: Callable[[Observation], bool], among: Sequence[Observation]) -> Signal:
        return Signal(name, sum(hit(o) for o in among) / len(among) if among else None)

    mean_rest = sum(rest) / len(rest) if rest else 0.0
    blowup = sum(o.length for o in bad) / len(bad) / mean_rest if mean_rest > 0 else None
    return [
        share("hedging_rate", lambda o: o.hedged, bad),
        share("attack_share", lambda o: o.attack is not None, bad),
        share("answer_collapse", lambda o: id(o) in collapsed, bad),
        share("format_without_accuracy", lambda o: bool(o.format_pass), formatted),
        Signal("length_blowup", blowup),
    ]


def describe_forms(found: Sequence[Signal], obs: Sequence[Observation], *, ratio: float) -> str:
    """The dominant forms of the paid-but-rejected completions in words (a share of at least half, a length of at
    least ``ratio`` times the rest), with the most common attack pattern named; "" when none dominates."""
    words = {
        "hedging_rate": "hedged",
        "attack_share": "an audit attack pattern",
        "answer_collapse": "their group's collapsed answer",
        "format_without_accuracy": "format-only passes",
    }
    parts = []
    for sig in found:
        if sig.value is None:
            continue
        if sig.name in words and sig.value >= 0.5:
            text = words[sig.name]
            if sig.name == "attack_share":
                names = [o.attack for o in obs if exploited(o) and o.attack]
                text += f" ({max(set(names), key=names.count)})"
            parts.append(f"{sig.value:.0%} {text}")
        elif sig.name == "length_blowup" and sig.value >= ratio:
            parts.append(f"{sig.value:.1f}x as long as the rest")
    return "; those completions: " + ", ".join(parts) if parts else ""
