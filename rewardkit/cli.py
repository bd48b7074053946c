"""The ``rewardkit`` command. Core verbs live here; each card folder adds its own verbs.

A card folder contributes a module with ``add_commands(subparsers)``; it is imported only when
present and importable, so a light install still has ``rewards list`` and ``score``.
"""

from __future__ import annotations

import argparse
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
    score.add_argument("--out", required=True, help="output .jsonl: input columns + score + reason")
    score.add_argument("--completion-column", default="completion", help="column holding the completion")
    score.add_argument("--batch-size", type=int, default=64)
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

    from rewardkit.data import read_records, write_jsonl
    from rewardkit.registry import get_reward

    reward = get_reward(args.reward, load_config_arg(args.config))
    records = read_records(args.data)
    if records and args.completion_column not in records[0]:
        raise ValueError(f"{args.data}: no column {args.completion_column!r} (columns: {sorted(records[0])})")
    out_rows = []
    counts: Counter[str] = Counter()
    total = 0.0
    with tqdm(total=len(records), desc=f"scoring with {reward.__name__}", unit="sample") as bar:
        for start in range(0, len(records), args.batch_size):
            batch = records[start : start + args.batch_size]
            completions = [r.get(args.completion_column) for r in batch]
            columns = {k: [r.get(k) for r in batch] for k in batch[0] if k != args.completion_column}
            results = reward.details(completions, **columns)
            for record, result in zip(batch, results, strict=True):
                extra = result.model_dump(exclude={"score", "reason"})
                out_rows.append(
                    {**record, "score": result.score, "reason": result.reason, **({"details": extra} if extra else {})}
                )
                if result.score is None:
                    counts["unscorable"] += 1
                else:
                    counts["scored"] += 1
                    total += result.score
            bar.update(len(batch))
    write_jsonl(args.out, out_rows)
    mean = total / counts["scored"] if counts["scored"] else float("nan")
    print(
        f"{len(out_rows)} samples: {counts['scored']} scored (mean {mean:.4f}), "
        f"{counts['unscorable']} unscorable -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
