"""``rewardsmith samples``: the bundled sample files, by the ``samples:NAME`` every path option accepts."""

from __future__ import annotations

import argparse


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    samples = subparsers.add_parser(
        "samples",
        help="bundled sample rows and specs, usable from any directory as samples:NAME",
        description="Every option that reads a data or YAML file accepts samples:NAME for a bundled sample.",
    )
    samples.add_argument("name", nargs="?", help="print this sample's installed path (samples:NAME or NAME)")
    samples.set_defaults(func=cmd_samples)


def cmd_samples(args: argparse.Namespace) -> int:
    from rewardsmith.sample_files import PREFIX, sample_names, sample_path

    if args.name:
        name = args.name if args.name.startswith(PREFIX) else PREFIX + args.name
        print(sample_path(name))
        return 0
    for name in sample_names():
        print(f"{PREFIX}{name}")
    print("use one wherever a file is read: rewardsmith score --data samples:scoring_demo.jsonl ...")
    return 0
