"""``rewardsmith rescore``: re-score stored rollouts with a spec and diff the verdicts against the stored rewards.

The work is :func:`rewardsmith.rescore.rescore`; this module parses arguments and sets the exit status: 0 when the
flips stay within ``--max-flips`` (or no limit was given) and something was scorable, 1 when the flips exceed it or
nothing was scorable, 2 for a usage or data error. Ctrl-C says how many rows are saved and the command that resumes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rewardsmith.rollouts import FORMATS


def add_commands(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser(
        "rescore",
        help="re-score stored rollouts (score output, TRL completions, verl dumps, NeMo Gym rollouts) with a spec "
        "and diff against the stored rewards",
    )
    cmd.add_argument("--spec", required=True, help="reward spec (YAML/JSON) as it is now")
    cmd.add_argument("--data", required=True, help="a stored rollout file (jsonl, json, parquet) or a folder of them")
    cmd.add_argument("--out", required=True, help="folder for rescored.jsonl, flips.jsonl, summary.md, report.html")
    cmd.add_argument("--format", choices=FORMATS, default=None, help="the stored layout (default: from its columns)")
    cmd.add_argument(
        "--only",
        choices=("all", "unscorable"),
        default="all",
        help="'unscorable': rescore only rows whose stored reward was unscorable (null/NaN)",
    )
    cmd.add_argument("--reason-matches", default=None, metavar="REGEX", help="only rows whose stored reason matches")
    cmd.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="STORED=COLUMN",
        help="hand a stored column to the spec under another name (repeatable), e.g. answer=solution",
    )
    cmd.add_argument("--gold-file", default=None, help="a dataset whose columns are joined to the stored rows")
    cmd.add_argument("--join-on", default=None, metavar="COLUMN", help="the column --gold-file rows are matched by")
    cmd.add_argument("--completion-column", default="completion", help="for rewardsmith score outputs")
    cmd.add_argument("--batch-size", type=int, default=64)
    cmd.add_argument("--max-flips", type=int, default=None, help="exit 1 when more verdicts than this moved")
    cmd.add_argument("--overwrite", action="store_true", help="start afresh (default: resume what --out holds)")
    cmd.set_defaults(func=cmd_rescore)


def cmd_rescore(args: argparse.Namespace) -> int:
    from rewardsmith.rescore import RESCORED_FILE, RescoreOptions, rescore

    rename = {}
    for pair in args.rename:
        before, sep, after = pair.partition("=")
        if not sep or not before or not after:
            raise ValueError(f"--rename {pair!r}: write STORED=COLUMN")
        rename[before] = after
    options = RescoreOptions(
        spec=args.spec,
        data=args.data,
        out=args.out,
        format=args.format,
        only=args.only,
        reason_matches=args.reason_matches,
        rename=rename,
        gold_file=args.gold_file,
        join_on=args.join_on,
        completion_column=args.completion_column,
        batch_size=args.batch_size,
        max_flips=args.max_flips,
        overwrite=args.overwrite,
    )
    from rewardsmith.cli.interrupts import command_line, on_interrupt, stores_saved

    log = Path(args.out) / RESCORED_FILE
    with on_interrupt(lambda: stores_saved([(log, "rescored rows")]), lambda: command_line(drop=("--overwrite",))):
        outcome = rescore(options)
    print(f"{outcome.summary_line()} -> {outcome.paths['report']}")
    if outcome.rescored and not any(
        v for k, v in outcome.overall.items() if k not in ("now_unscorable", "unscorable_both")
    ):
        print(
            f"rewardsmith: nothing was scorable: all {outcome.rescored} rows unscorable with this spec", file=sys.stderr
        )
        return 1
    if args.max_flips is not None and outcome.flip_count > args.max_flips:
        print(
            f"rewardsmith: {outcome.flip_count} verdicts moved, more than --max-flips {args.max_flips}", file=sys.stderr
        )
        return 1
    return 0
