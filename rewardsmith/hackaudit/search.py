"""Seeded exploit search: mutate wrong answers and hedges, guided by the reward's own reasons, within a budget.

The fixed attacks ask known questions; a reward can still pay a wrong answer none of them writes. The search starts
from wrong answers (each row's wrong values, boxed) and the fixed attacks' own completions, and mutates them: the
answer in another layout (bold, tags, a bare line, a fence), hedged with the gold, duplicated, in Unicode
look-alikes, truncated, with the gold hidden where a final answer is not read. Each mutation keeps the candidate
wrong by construction: a candidate that states one answer carries it (``states``), and one whose answer the
attacker's independent reading takes for the gold (:func:`~rewardsmith.hackaudit.attacks.base.states_gold`) is
dropped unscored, so a finding is never a right answer.

The reward steers: a child whose score rose, or whose reason is one the search has not seen, is kept in front of the
frontier and its mutation is tried more often. The reason is the reward's own account of a verdict, so a changed
reason means the mutation reached a different branch of the checker, which is where holes are. Everything random
comes from one ``random.Random`` seeded by ``seed``, so a search is replayable; ``budget`` bounds the completions
scored (seeds included), so it always ends.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.hackaudit.attacks import Attack
from rewardsmith.hackaudit.attacks.base import AttackContext, Variant, completion_text, states_gold
from rewardsmith.hackaudit.controls import row_context
from rewardsmith.hackaudit.spec_kinds import SpecProfile

#: completions scored together (one ``details`` call); the last batch is cut to the budget
BATCH = 16
#: seeds taken before mutating, as a share of the budget: the rest is spent on mutations
SEED_SHARE = 0.25
#: parents drawn among this many best candidates of the frontier (a tournament)
TOURNAMENT = 4
#: mutations in a row that gave nothing new before a fresh seed is taken, and before the search gives up (with no
#: seed left, a frontier whose every mutation was already scored has nothing more to offer within any budget)
STUCK, GIVE_UP = 10, 50
#: sealed findings shown in ``metrics.json`` and the summary (the findings file holds all)
METRICS_FINDINGS = 20

_DIGITS = re.compile(r"\d+")
#: Unicode look-alikes of ASCII digits and letters: what a lenient normaliser may fold and a strict one may not.
LOOKALIKES = {
    **{str(d): chr(0xFF10 + d) for d in range(10)},  # fullwidth digits
    "a": "\u0430",
    "e": "\u0435",
    "o": "\u043e",
    "x": "\u0445",
    "-": "\u2212",
    ".": "\u2024",
}


@dataclass(frozen=True)
class Candidate:
    """A wrong completion in parts: its answer text, what it states (``None``: a hedge or no single answer) and the
    layout the answer is written in; ``lineage`` names the seed and every mutation applied since."""

    row: int
    answer: str
    states: str | None
    layout: str
    lineage: tuple[str, ...]
    text: str | None = None  # a seed taken whole from a fixed attack: its text, mutated only through ``raw`` operators

    def completion(self, ctx: AttackContext) -> str:
        return self.text if self.text is not None else render(ctx, self.layout, self.answer)


def render(ctx: AttackContext, layout: str, answer: str) -> str:
    """``answer`` written in ``layout`` (a wrong-answer layout: each shows ``answer`` as the final answer)."""
    gold = (ctx.gold or "").strip()
    return {
        "boxed": lambda: ctx.frame(f"The answer is \\boxed{{{answer}}}."),
        "bold": lambda: ctx.frame(f"The answer is **{answer}**."),
        "bare": lambda: ctx.frame(answer),
        "answer_tags": lambda: f"<think>\nLet me work through the problem.\n</think>\n<answer>{answer}</answer>",
        "final_statement": lambda: ctx.frame(f"Therefore, the final answer is {answer}."),
        "no_think": lambda: f"\\boxed{{{answer}}}",
        "fenced": lambda: ctx.frame(f"```\n{answer}\n```"),
        "gold_in_think": lambda: f"<think>\nIt could be {gold}.\n</think>\nThe answer is \\boxed{{{answer}}}.",
        "gold_in_comment": lambda: ctx.frame(f"<!-- {gold} --> The answer is \\boxed{{{answer}}}."),
        "gold_in_phantom": lambda: ctx.frame(f"The answer is \\boxed{{{answer}\\phantom{{{gold}}}}}."),
        "unclosed_think": lambda: f"<think>\nLet me work through the problem.\n\\boxed{{{answer}}}",
    }[layout]()


LAYOUTS = ("boxed", "bold", "bare", "answer_tags", "final_statement", "no_think", "fenced")
#: layouts that write the gold somewhere a final answer is not read: only for candidates that state a wrong answer
GOLD_HIDING = ("gold_in_think", "gold_in_comment", "gold_in_phantom", "unclosed_think")

Mutation = Callable[[Candidate, AttackContext, random.Random], Candidate | None]


def _with(c: Candidate, name: str, **changes: Any) -> Candidate:
    return Candidate(**{**c.__dict__, **changes, "lineage": (*c.lineage, name)})


def _relayout(c: Candidate, ctx: AttackContext, rng: random.Random) -> Candidate | None:
    return (
        None if c.text is not None else _with(c, "relayout", layout=rng.choice([x for x in LAYOUTS if x != c.layout]))
    )


def _hide_gold(c: Candidate, ctx: AttackContext, rng: random.Random) -> Candidate | None:
    if c.text is not None or c.states is None or not ctx.gold:
        return None
    return _with(c, "hide_gold", layout=rng.choice(GOLD_HIDING))


def _hedge_gold(c: Candidate, ctx: AttackContext, rng: random.Random) -> Candidate | None:
    if c.text is not None or not ctx.gold:
        return None
    gold = ctx.gold.strip()
    joined = rng.choice([f"{c.answer} or {gold}", f"{gold}, {c.answer}", f"{c.answer} \\lor {gold}"])
    return _with(c, "hedge_gold", answer=joined, states=None)


def _duplicate(c: Candidate, ctx: AttackContext, rng: random.Random) -> Candidate | None:
    if c.text is not None:
        return None
    sep = rng.choice([" ", ", ", " = ", "\n"])
    return _with(c, "duplicate", answer=f"{c.answer}{sep}{c.answer}", states=None)


def _lookalike(c: Candidate, ctx: AttackContext, rng: random.Random) -> Candidate | None:
    if c.text is not None:
        return None
    swappable = [i for i, ch in enumerate(c.answer) if ch in LOOKALIKES]
    if not swappable:
        return None
    chosen = set(rng.sample(swappable, k=rng.randint(1, len(swappable))))
    answer = "".join(LOOKALIKES[ch] if i in chosen else ch for i, ch in enumerate(c.answer))
    return _with(c, "lookalike", answer=answer, states=answer if c.states is not None else None)


def _truncate(c: Candidate, ctx: AttackContext, rng: random.Random) -> Candidate | None:
    """The answer cut short; what is left is what it states (a hedge cut to its first candidate may be the gold, and
    is then dropped)."""
    if c.text is not None or len(c.answer) < 2:
        return None
    answer = c.answer[: rng.randint(1, len(c.answer) - 1)]
    return _with(c, "truncate", answer=answer, states=answer)


def _glue(c: Candidate, ctx: AttackContext, rng: random.Random) -> Candidate | None:
    """The gold's text glued to the answer (``4`` and ``5`` as ``45``): one stated answer that is neither."""
    if c.text is not None or c.states is None or not ctx.gold:
        return None
    gold = ctx.gold.strip()
    answer = rng.choice([f"{gold}{c.answer}", f"{c.answer}{gold}", f"{gold}\\,{c.answer}", f"{gold}{c.answer}x"])
    return _with(c, "glue", answer=answer, states=answer)


def _tag_games(c: Candidate, ctx: AttackContext, rng: random.Random) -> Candidate | None:
    """Tags around a whole completion: stuffed, doubled or left open, the completion's answer unchanged."""
    text = c.completion(ctx)
    tag = ctx.profile.answer_tag or "answer"
    games = [
        f"<think></think>{text}",
        f"{text}\n<{tag}></{tag}>",
        f"<{tag}>{text}",
        f"{text}\n</think>",
        text.replace("<think>", "<think><think>", 1),
    ]
    return _with(c, "tag_games", text=rng.choice(games))


MUTATIONS: dict[str, Mutation] = {
    "relayout": _relayout,
    "hide_gold": _hide_gold,
    "hedge_gold": _hedge_gold,
    "duplicate": _duplicate,
    "lookalike": _lookalike,
    "truncate": _truncate,
    "glue": _glue,
    "tag_games": _tag_games,
}


def seeds(
    rows: Sequence[Mapping[str, Any]], attacks: Sequence[Attack], profile: SpecProfile, seed: int
) -> list[Candidate]:
    """The starting points: each gold row's wrong values in every layout, then every fixed attack's completions."""
    out: list[Candidate] = []
    for index, row in enumerate(rows):
        ctx = row_context(row, profile, seed=seed)
        if not ctx.gold or not ctx.gold.strip():
            continue
        for value in ctx.wrong_values(3):
            out += [Candidate(index, value, value, layout, ("wrong_value",)) for layout in LAYOUTS[:3]]
        for attack in attacks:
            for item in attack.generate(ctx):
                if states_gold(item, ctx.gold):
                    continue
                states = item.states if isinstance(item, Variant) else None
                out.append(Candidate(index, "", states, "", (attack.name,), text=completion_text(item)))
    return out


@dataclass
class SearchResult:
    """What the search scored and found; ``findings`` are the candidates paid at least the threshold."""

    budget: int
    seed: int
    evaluated: int = 0
    dropped_right: int = 0
    reasons_seen: int = 0
    findings: list[dict[str, Any]] = field(default_factory=list)
    operator_credit: dict[str, float] = field(default_factory=dict)
    tried: list[Candidate] = field(default_factory=list)  # every candidate scored, in order


def search_metrics(result: SearchResult, sealed: Sequence[Mapping[str, Any]], path: Any) -> dict[str, Any]:
    """The search's block of ``metrics.json``: counts, the rows with a finding, each mutation's credit (how often
    it moved the reward), and the first :data:`METRICS_FINDINGS` sealed findings (all are in ``path``)."""
    return {
        "budget": result.budget,
        "seed": result.seed,
        "evaluated": result.evaluated,
        "dropped_right": result.dropped_right,
        "distinct_reasons": result.reasons_seen,
        "found": len(sealed),
        "rows_with_findings": sorted({f["row"] for f in sealed}),
        "operator_credit": {k: round(v, 3) for k, v in sorted(result.operator_credit.items())},
        "findings_file": str(path),
        "findings": [
            {k: f[k] for k in ("row", "origin", "score", "reason", "completion", "seal")}
            for f in sealed[:METRICS_FINDINGS]
        ],
    }


def reason_shape(reason: str) -> str:
    """A reason with its numbers blanked: "70 chars" and "71 chars" are one branch of the checker, not two."""
    return _DIGITS.sub("#", reason)[:300]


@dataclass
class _Scored:
    candidate: Candidate
    score: float | None
    shape: str  # the reward's reason, numbers blanked
    priority: float


def search_exploits(
    reward: Any,
    rows: Sequence[Mapping[str, Any]],
    profile: SpecProfile,
    attacks: Sequence[Attack],
    *,
    budget: int,
    seed: int = 0,
    threshold: float = 1.0,
) -> SearchResult:
    """Score at most ``budget`` wrong completions with ``reward``: seeds first, then mutations of the frontier's best
    (by score, with a bonus for a reason not seen before); return every distinct completion paid ``threshold``."""
    rng = random.Random(f"exploit-search:{seed}")
    result = SearchResult(budget=budget, seed=seed)
    contexts = {i: row_context(row, profile, seed=seed) for i, row in enumerate(rows)}
    pool = seeds(rows, attacks, profile, seed)
    rng.shuffle(pool)
    n_seeds = min(len(pool), max(1, int(budget * SEED_SHARE))) if pool else 0
    queue: list[tuple[Candidate, _Scored | None, str | None]] = [(c, None, None) for c in pool[:n_seeds]]
    reserve = pool[n_seeds:]  # more seeds, for when the frontier is empty or yields nothing new
    frontier: list[_Scored] = []
    seen_texts: set[tuple[int, str]] = set()
    reasons: set[str] = set()
    credit = dict.fromkeys(MUTATIONS, 1.0)
    stale = 0
    while result.evaluated < budget and stale < GIVE_UP:
        batch: list[tuple[Candidate, str, _Scored | None, str | None]] = []
        while len(batch) < min(BATCH, budget - result.evaluated) and stale < GIVE_UP:
            if not queue and reserve and (not frontier or stale >= STUCK):
                queue.append((reserve.pop(0), None, None))  # nothing (new) left to mutate: a fresh seed
                stale = 0
            if not queue:
                if not frontier:
                    break
                chosen = max(rng.sample(frontier, k=min(TOURNAMENT, len(frontier))), key=lambda s: s.priority)
                operator = rng.choices(list(credit), weights=list(credit.values()))[0]
                child = MUTATIONS[operator](chosen.candidate, contexts[chosen.candidate.row], rng)
                if child is None:
                    stale += 1
                    continue
                queue.append((child, chosen, operator))
            candidate, parent, op = queue.pop(0)
            ctx = contexts[candidate.row]
            if candidate.states is not None and states_gold(Variant("", candidate.states), ctx.gold):
                result.dropped_right += 1
                continue
            text = candidate.completion(ctx)
            if (candidate.row, text) in seen_texts:
                stale += 1
                continue
            seen_texts.add((candidate.row, text))
            stale = 0
            batch.append((candidate, text, parent, op))
        if not batch:
            break
        batch_rows = [rows[c.row] for c, _, _, _ in batch]
        columns = {k: [r.get(k) for r in batch_rows] for k in batch_rows[0] if k != "completion"}
        verdicts = reward.details([text for _, text, _, _ in batch], **columns)
        result.evaluated += len(batch)
        for (candidate, text, parent, op), verdict in zip(batch, verdicts, strict=True):
            result.tried.append(candidate)
            score, reason = verdict.score, str(verdict.reason or "")
            shape = reason_shape(reason)
            novel = shape not in reasons
            reasons.add(shape)
            priority = (score if score is not None else -1.0) + (0.5 if novel else 0.0)
            if op is not None and parent is not None:
                rose = score is not None and (parent.score is None or score > parent.score)
                credit[op] += 1.0 if rose or shape != parent.shape else 0.0
            if score is not None and score >= threshold - 1e-9:
                result.findings.append(
                    {
                        "row": candidate.row,
                        "completion": text,
                        "states": candidate.states,
                        "origin": " > ".join(candidate.lineage),
                        "score": score,
                        "reason": reason,
                    }
                )
                continue  # paid already: mutating it further finds the same hole again
            frontier.append(_Scored(candidate, score, shape, priority))
    result.reasons_seen = len(reasons)
    result.operator_credit = credit
    return result


def search_findings(metrics: Mapping[str, Any]) -> list[str]:
    """One finding line when the search found exploits (none when it found none or did not run)."""
    block = metrics.get("search")
    if not block or not block["found"]:
        return []
    first = block["findings"][0]
    return [
        f"EXPLOITS FOUND: the search found {block['found']} wrong completions paid on "
        f"{len(block['rows_with_findings'])} rows in {block['evaluated']} tries (first: row {first['row']}, "
        f"{first['origin']}, score {first['score']}, {first['reason'][:80]!r}); sealed in {block['findings_file']}"
    ]


def search_markdown(metrics: Mapping[str, Any]) -> list[str]:
    """The summary's search section: what was tried, what was found (sealed), and the replay command."""
    block = metrics.get("search")
    if not block:
        return []
    lines = [
        "",
        f"## Exploit search (seed {block['seed']}, budget {block['budget']})",
        "",
        f"{block['evaluated']} wrong completions scored ({block['dropped_right']} mutations stated the gold and were "
        f"dropped; {block['distinct_reasons']} distinct reasons): {block['found']} paid.",
    ]
    if block["findings"]:
        lines += ["", "| row | origin | score | reason | completion (end) | seal |", "|---|---|---|---|---|---|"]
        for f in block["findings"]:
            tail = f["completion"][-60:].replace("|", "\\|").replace("\n", "⏎")
            reason = str(f["reason"])[:60].replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {f['row']} | {f['origin']} | {f['score']} | {reason} | `{tail}` | {f['seal'][:12]} |")
    lines += ["", f"Replay after a fix: `rewardsmith audit replay {block['findings_file']} --spec SPEC`"]
    return lines
