"""The ``rewardkit`` command. Core verbs live here; each card folder adds its own verbs.

A card folder contributes a module with ``add_commands(subparsers)``; it is imported only when
present and importable, so a light install still has ``rewards list`` and ``score``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import logging
import sys
from collections import Counter
from pathlib import Path
from typing import Any

#: Modules that contribute sub-commands (``add_commands(subparsers)``), imported lazily.
COMMAND_MODULES = (
    "rewardkit.sandboxes.cli",
    "rewardkit.judges.cli",
    "rewardkit.constitutions.cli",
    "rewardkit.judges.audit.cli",
    "rewardkit.adapters.cli",
)

#: Keys ``score`` adds to each output row: the input row's position (reruns skip the positions already
#: written) and which reward, config and completion column scored it (a rerun never mixes two scorers).
INDEX_KEY = "row_index"
SCORER_KEY = "scorer"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    if not hasattr(args, "func"):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError) as exc:
        print(f"rewardkit: error: {exc}", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewardkit", description="Verifiable rewards and LLM judges for RL post-training."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

    rewards = sub.add_parser("rewards", help="inspect registered rewards")
    rsub = rewards.add_subparsers(metavar="ACTION")
    lst = rsub.add_parser("list", help="names, one-line docs and config fields")
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    lst.set_defaults(func=cmd_rewards_list)

    score = sub.add_parser("score", help="score a data file with a reward; writes scores and reasons")
    score.add_argument("--reward", required=True, help="registered reward name (see `rewardkit rewards list`)")
    score.add_argument("--config", default=None, help="reward config as JSON, or @FILE (JSON or YAML)")
    score.add_argument("--data", required=True, help="any file `datasets` reads (jsonl, json, csv, parquet)")
    score.add_argument(
        "--out", required=True, help=f"output .jsonl: input columns + score + reason + {INDEX_KEY}, appended per batch"
    )
    score.add_argument("--completion-column", default="completion", help="column holding the completion")
    score.add_argument("--batch-size", type=int, default=64)
    score.add_argument(
        "--overwrite", action="store_true", help="start OUT afresh (default: resume, skipping rows already in OUT)"
    )
    score.set_defaults(func=cmd_score)

    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and (module_name.startswith(exc.name) or exc.name.startswith("rewardkit")):
                continue
            logging.getLogger(__name__).debug("commands from %s unavailable: %s", module_name, exc)
            continue
        module.add_commands(sub)
    return parser


def load_config_arg(value: str | None) -> dict[str, Any]:
    """``--config`` as inline JSON or ``@path`` to a JSON/YAML file."""
    if not value:
        return {}
    if value.startswith("@"):
        import yaml

        text = Path(value[1:]).read_text()
        data = yaml.safe_load(text)
    else:
        try:
            data = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--config is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("--config must be a JSON/YAML object")
    return data


def cmd_rewards_list(args: argparse.Namespace) -> int:
    from rewardkit.registry import list_rewards, reward_class

    rows = []
    for name in list_rewards():
        cls = reward_class(name)
        doc = (cls.__doc__ or "").strip().splitlines()
        fields = {field: (info.description or "") for field, info in cls.Config.model_fields.items()}
        rows.append({"name": name, "doc": doc[0] if doc else "", "config": fields})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print(f"{row['name']:<20} {row['doc']}")
        for field, desc in row["config"].items():
            print(f"{'':<22}{field}: {desc}" if desc else f"{'':<22}{field}")
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from rewardkit.data import append_jsonl, load_table, read_rows
    from rewardkit.registry import get_reward

    config = load_config_arg(args.config)
    reward = get_reward(args.reward, config)
    scorer = scorer_id(args.reward, config, args.completion_column)
    if args.batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    table = load_table(args.data)
    n = len(table)
    if n and args.completion_column not in table.column_names:
        raise ValueError(f"{args.data}: no column {args.completion_column!r} (columns: {sorted(table.column_names)})")
    for key in (INDEX_KEY, SCORER_KEY):
        if key in table.column_names:
            raise ValueError(f"{args.data}: column {key!r} is a key score writes; rename it")
    out = Path(args.out)
    if args.overwrite:
        out.unlink(missing_ok=True)
    tally = ScoreTally()
    done = previous_scores(out, table, args.completion_column, scorer, tally)
    if done:
        print(f"resuming: {len(done)} of {n} rows already scored in {out} (--overwrite starts again)")
    pending = [i for i in range(n) if i not in done]
    # the bar shows on a terminal only: piped output and logs get the summary line alone
    bar = tqdm(total=n, initial=len(done), desc=f"scoring with {reward.__name__}", unit="sample", disable=None)
    with bar:
        for start in range(0, len(pending), args.batch_size):
            indices = pending[start : start + args.batch_size]
            batch = read_rows(table, indices, args.data)
            completions = [r.get(args.completion_column) for r in batch]
            columns = {k: [r.get(k) for r in batch] for k in batch[0] if k != args.completion_column}
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
                tally.add(result.score)
            append_jsonl(out, rows)
            bar.update(len(batch))
    out.touch()  # an empty data file still gives an (empty) output
    print(f"{tally.total} samples: {tally.summary()} -> {args.out}")
    return 0


class ScoreTally:
    """Running counts for the summary line (resumed rows included)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.sum = 0.0

    def add(self, score: float | None) -> None:
        if score is None:
            self.counts["unscorable"] += 1
        else:
            self.counts["scored"] += 1
            self.sum += score

    @property
    def total(self) -> int:
        return self.counts["scored"] + self.counts["unscorable"]

    def summary(self) -> str:
        scored = self.counts["scored"]
        mean = self.sum / scored if scored else float("nan")
        return f"{scored} scored (mean {mean:.4f}), {self.counts['unscorable']} unscorable"


def scorer_id(reward: str, config: dict[str, Any], completion_column: str) -> str:
    """``name@digest`` of what scores the rows: the reward, its config as given, the completion column."""
    blob = json.dumps([reward, config, completion_column], sort_keys=True, default=str)
    return f"{reward}@{hashlib.sha256(blob.encode()).hexdigest()[:12]}"


def previous_scores(out: Path, table: Any, completion_column: str, scorer: str, tally: ScoreTally) -> set[int]:
    """Row positions an earlier run already wrote to ``out`` (counted into ``tally``).

    Refuses an ``out`` that holds other rows (no row position, a position past the data, another scorer,
    a different completion at the same position), so two runs never mix in one file.
    """
    from rewardkit.data import read_appended_jsonl

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
        tally.add(score)
    return done


if __name__ == "__main__":
    raise SystemExit(main())
