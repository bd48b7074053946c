"""Score a data file with a reward: the runner under ``rewardsmith score``.

Each batch is appended to the output and synced, so an interrupted run resumes where it stopped; an output
written by another reward, config or completion column is refused rather than mixed.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from rewardsmith.reward import Reward

#: Keys ``score`` adds to each output row: the input row's position (reruns skip the positions already
#: written) and which reward, config and completion column scored it (a rerun never mixes two scorers).
INDEX_KEY = "row_index"
SCORER_KEY = "scorer"


def score_file(
    reward: Reward,
    data: str | Path,
    out: str | Path,
    *,
    reward_name: str,
    config: dict[str, Any],
    completion_column: str = "completion",
    batch_size: int = 64,
    overwrite: bool = False,
) -> ScoreTally:
    """Score every row of ``data`` into ``out`` (JSONL: input columns + score + reason + row index).

    Returns the tally of the whole output, resumed rows included.
    """
    from tqdm import tqdm

    from rewardsmith.data import load_table, read_rows
    from rewardsmith.store import append_jsonl

    scorer = scorer_id(reward_name, config, completion_column)
    out = Path(out)
    if batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    table = load_table(data)
    n = len(table)
    if n and completion_column not in table.column_names:
        raise ValueError(f"{data}: no column {completion_column!r} (columns: {sorted(table.column_names)})")
    for key in (INDEX_KEY, SCORER_KEY):
        if key in table.column_names:
            raise ValueError(f"{data}: column {key!r} is a key score writes; rename it")
    if overwrite:
        out.unlink(missing_ok=True)
    tally = ScoreTally()
    done = previous_scores(out, table, completion_column, scorer, tally)
    if done:
        print(f"resuming: {len(done)} of {n} rows already scored in {out} (--overwrite starts again)")
    pending = [i for i in range(n) if i not in done]
    # the bar shows on a terminal only: piped output and logs get the summary line alone
    bar = tqdm(total=n, initial=len(done), desc=f"scoring with {reward.__name__}", unit="sample", disable=None)
    with bar:
        for start in range(0, len(pending), batch_size):
            indices = pending[start : start + batch_size]
            batch = read_rows(table, indices, data)
            completions = [r.get(completion_column) for r in batch]
            columns = {k: [r.get(k) for r in batch] for k in batch[0] if k != completion_column}
            results = reward.details(completions, **columns)
            rows = []
            for index, record, result in zip(indices, batch, results, strict=True):
                extra = result.model_dump(exclude={"score", "reason"})
                rows.append(
                    {
                        **record,
                        "score": result.score,
                        "reason": result.reason,
                        **({"details": extra} if extra else {}),
                        INDEX_KEY: index,
                        SCORER_KEY: scorer,
                    }
                )
                tally.add(result.score, result.reason)
            append_jsonl(out, rows)
            bar.update(len(batch))
    out.touch()  # an empty data file still gives an (empty) output
    return tally


class ScoreTally:
    """Running counts for the summary line (resumed rows included), and why samples were unscorable."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.sum = 0.0
        self.reasons: Counter[str] = Counter()

    def add(self, score: float | None, reason: Any = None) -> None:
        if score is None:
            self.counts["unscorable"] += 1
            self.reasons[reason if isinstance(reason, str) and reason else "no reason given"] += 1
        else:
            self.counts["scored"] += 1
            self.sum += score

    @property
    def total(self) -> int:
        return self.counts["scored"] + self.counts["unscorable"]

    def summary(self) -> str:
        scored = self.counts["scored"]
        mean = f"{self.sum / scored:.4f}" if scored else "n/a: nothing scored"
        return f"{scored} scored (mean {mean}), {self.counts['unscorable']} unscorable"

    def failure(self) -> str | None:
        """One line saying how many samples were unscorable and why (the commonest reasons first), or ``None``
        when every sample scored. A run that scored nothing says so first: its mean is no measurement at all."""
        unscorable = self.counts["unscorable"]
        if not unscorable:
            return None
        head = (
            f"nothing was scorable: all {unscorable} samples unscorable"
            if not self.counts["scored"]
            else f"{unscorable} of {self.total} samples unscorable"
        )
        common = self.reasons.most_common(3)
        why = "; ".join(f"{count}x {_short(reason)}" for reason, count in common)
        rest = unscorable - sum(count for _, count in common)
        return f"{head}: {why}" + (f"; {rest} with other reasons" if rest else "")


def _short(reason: str, limit: int = 300) -> str:
    """A reason on one line, cut to ``limit`` characters."""
    flat = " ".join(reason.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def scorer_id(reward: str, config: dict[str, Any], completion_column: str) -> str:
    """``name@digest`` of what scores the rows: the reward, its config as given, the completion column. The config's
    grouped settings count in their flat spelling (``extract: {boxed: last}`` is ``boxed: last``), so one setting
    written either way is one scorer."""
    blob = json.dumps([reward, _one_spelling(reward, config), completion_column], sort_keys=True, default=str)
    return f"{reward}@{hashlib.sha256(blob.encode()).hexdigest()[:12]}"


def _one_spelling(reward: str, config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with its groups' settings flat where the reward's config model says which group they are in."""
    from rewardsmith.registry import reward_class

    try:
        return reward_class(reward).Config.flat(config)
    except Exception:  # an unknown reward or a config it refuses fails when the reward is built, not here
        return config


def previous_scores(out: Path, table: Any, completion_column: str, scorer: str, tally: ScoreTally) -> set[int]:
    """Row positions an earlier run already wrote to ``out`` (counted into ``tally``).

    Refuses an ``out`` that holds other rows (no row position, a position past the data, another scorer,
    a different completion at the same position), so two runs never mix in one file.
    """
    from rewardsmith.store import read_appended_jsonl

    done: set[int] = set()
    for lineno, row in enumerate(read_appended_jsonl(out), start=1):
        index, score = row.get(INDEX_KEY), row.get("score")
        valid_score = score is None or (isinstance(score, (int, float)) and not isinstance(score, bool))
        if not isinstance(index, int) or not 0 <= index < len(table) or not valid_score:
            raise ValueError(
                f"{out}: line {lineno} is not a score row of this data (no valid {INDEX_KEY!r}); "
                "use --overwrite or another --out"
            )
        if row.get(SCORER_KEY) != scorer:
            raise ValueError(
                f"{out}: line {lineno} was scored by {row.get(SCORER_KEY)!r}, not {scorer!r} (another reward, config "
                "or completion column); use --overwrite or another --out"
            )
        if index in done:
            continue
        written, current = row.get(completion_column), table[index].get(completion_column)
        if isinstance(written, str) and isinstance(current, str) and written != current:
            raise ValueError(
                f"{out}: row {index} was scored from a different completion; use --overwrite or another --out"
            )
        done.add(index)
        tally.add(score, row.get("reason"))
    return done
