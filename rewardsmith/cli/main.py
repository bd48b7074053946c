"""The ``rewardsmith`` entry point: builds one parser from the command modules and dispatches.

Each command module contributes ``add_commands(subparsers)`` and only parses arguments; the work is done by
library functions it calls. A command module that fails to import is a bug and fails loudly: it must import its
optional dependencies inside the function that needs them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from typing import Any

from rewardsmith.cli.config_files import read_yaml_file
from rewardsmith.cli.docs_pages import add_doc_epilogs
from rewardsmith.cli.extras import check_command_needs, tag_commands

#: Modules that contribute sub-commands (``add_commands(subparsers)``), in help order.
COMMAND_MODULES = (
    "rewardsmith.cli.rewards",
    "rewardsmith.cli.score",
    "rewardsmith.cli.rescore",
    "rewardsmith.cli.grade",
    "rewardsmith.cli.sandbox",
    "rewardsmith.cli.judge",
    "rewardsmith.cli.rlaif",
    "rewardsmith.cli.audit",
    "rewardsmith.cli.train",
    "rewardsmith.cli.serve",
    "rewardsmith.cli.samples",
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
        check_command_needs(args)  # before any work: a missing extra is one line, not a traceback minutes later
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError) as exc:
        print(f"rewardsmith: error: {exc}", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewardsmith", description="Verifiable rewards and LLM judges for RL post-training."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).add_commands(sub)
    tag_commands(parser)
    add_doc_epilogs(parser)
    return parser


def load_config_arg(value: str | None) -> dict[str, Any]:
    """``--config`` as inline JSON or ``@path`` to a JSON/YAML file."""
    if not value:
        return {}
    if value.startswith("@"):
        data = read_yaml_file(value[1:])
    else:
        try:
            data = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--config is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("--config must be a JSON/YAML object")
    return data


if __name__ == "__main__":
    raise SystemExit(main())
