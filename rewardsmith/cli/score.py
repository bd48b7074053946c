"""``rewardsmith score``: score a data file with a reward, appending per batch and resuming.

The work is :func:`rewardsmith.scoring.score_file`; this module parses arguments and sets the exit status: 0 when
every sample was scored, 1 (with one line on stderr: how many were unscorable and the commonest reasons) otherwise,
2 for a usage or data error.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from rewardsmith.cli.main import load_config_arg
from rewardsmith.scoring import INDEX_KEY, score_file

if TYPE_CHECKING:
    from rewardsmith.adapters.runtime.ray.pool import RayPool


def add_commands(sub: argparse._SubParsersAction) -> None:
    score = sub.add_parser("score", help="score a data file with a reward; writes scores and reasons")
    score.add_argument("--reward", required=True, help="registered reward name (see `rewardsmith rewards list`)")
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
    score.add_argument(
        "--ray",
        default=None,
        metavar="auto|ADDRESS",
        help="score across a Ray cluster (needs rewardsmith[ray]); same output and resume as a local run",
    )
    score.add_argument("--ray-actors", type=int, default=None, help="actors with --ray (default: one per cluster CPU)")
    score.set_defaults(func=cmd_score, needs=lambda args: ("ray",) if args.ray else ())


def cmd_score(args: argparse.Namespace) -> int:
    from rewardsmith.registry import get_reward

    config = load_config_arg(args.config)
    pool = _ray_reward(args, config) if args.ray else None
    reward = pool if pool is not None else get_reward(args.reward, config)
    try:
        # the scorer id names the inner reward and config: a run resumes across local and --ray
        tally = score_file(
            reward,
            args.data,
            args.out,
            reward_name=args.reward,
            config=config,
            completion_column=args.completion_column,
            batch_size=args.batch_size,
            overwrite=args.overwrite,
        )
    finally:
        if pool is not None:
            pool.close()
    print(f"{tally.total} samples: {tally.summary()} -> {args.out}")
    failure = tally.failure()
    if failure is not None:
        # a trainer ignores None: a run whose samples went unscored must not pass for a measurement
        print(f"rewardsmith: {failure}", file=sys.stderr)
        return 1
    return 0


def _ray_reward(args: argparse.Namespace, config: dict) -> RayPool:
    """The reward as a pool of actors on the cluster at ``--ray``; a missing cluster is a one-line error."""
    from rewardsmith.adapters.runtime.ray.connect import ClusterUnavailable
    from rewardsmith.adapters.runtime.ray.score import cluster_pool

    if args.ray_actors is not None and args.ray_actors < 1:
        raise ValueError("--ray-actors must be at least 1")
    try:
        return cluster_pool({"name": args.reward, "config": config}, args.ray, num_actors=args.ray_actors)
    except ClusterUnavailable as exc:
        raise ValueError(f"--ray {args.ray}: {exc}") from None
