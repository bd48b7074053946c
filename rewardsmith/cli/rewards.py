"""``rewardsmith rewards list``: every registered reward with its one-line doc and config fields."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rewardsmith.reward_config import RewardConfig


def add_commands(sub: argparse._SubParsersAction) -> None:
    rewards = sub.add_parser("rewards", help="inspect registered rewards")
    rsub = rewards.add_subparsers(metavar="ACTION")
    lst = rsub.add_parser("list", help="names, one-line docs and config fields")
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    lst.set_defaults(func=cmd_rewards_list)


def cmd_rewards_list(args: argparse.Namespace) -> int:
    from rewardsmith.registry import list_rewards, reward_class

    rows: list[dict[str, Any]] = []
    for name in list_rewards():
        cls = reward_class(name)
        doc = (cls.__doc__ or "").strip().splitlines()
        fields = config_fields(cls.Config)
        rows.append({"name": name, "doc": doc[0] if doc else "", "config": fields})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print(f"{row['name']:<20} {row['doc']}")
        for field, desc in row["config"].items():
            print(f"{'':<22}{field}: {desc}" if desc else f"{'':<22}{field}")
    return 0


def config_fields(config: type[RewardConfig]) -> dict[str, str]:
    """Each setting of a reward config with its description; a group's settings as ``group.setting``."""
    groups = config.groups()
    fields: dict[str, str] = {}
    for field, info in config.model_fields.items():
        if field in groups:
            fields.update({f"{field}.{k}": (v.description or "") for k, v in groups[field].model_fields.items()})
        else:
            fields[field] = info.description or ""
    return fields
