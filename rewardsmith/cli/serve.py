"""``rewardsmith serve --spec FILE``: serve rewards over HTTP (native ``/v1/score`` and OpenRLHF's ``/get_reward``).

The work is :func:`rewardsmith.adapters.runtime.serve.runner.run_server` (or, with ``--ray``,
:func:`rewardsmith.adapters.runtime.ray.serve.serve_on_ray`); this module only parses arguments.
:func:`add_serve_arguments` and :func:`settings_from_args` are shared with other ways of serving (Ray).
"""

from __future__ import annotations

import argparse
from typing import Any

from rewardsmith.cli.main import load_config_arg


def add_commands(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="serve rewards over HTTP (for remote trainers: TRL, verl, OpenRLHF)")
    add_serve_arguments(serve)
    serve.set_defaults(func=cmd_serve, needs=lambda args: ("serve", "ray") if args.ray else ("serve",))


def add_serve_arguments(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--spec", required=True, help="YAML reward spec: one reward, a list, or {rewards: [...]}")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (0: any free port; the ready line shows it)")
    serve.add_argument("--workers", type=int, default=4, help="batches scored at the same time")
    serve.add_argument(
        "--max-queue", type=int, default=8192, help="requests that may wait for a worker; beyond: 429 (default 8192)"
    )
    serve.add_argument("--max-batch", type=int, default=256, help="samples per coalesced batch of small requests")
    serve.add_argument(
        "--batch-wait-ms", type=float, default=5.0, help="how long a batch waits for more requests (0: no wait)"
    )
    serve.add_argument("--threads", type=int, default=16, help="threads running synchronous reward code")
    serve.add_argument("--chunk-size", type=int, default=1, help="samples per reward call inside a request")
    serve.add_argument("--deadline-s", type=float, default=120.0, help="per-request deadline in seconds")
    serve.add_argument("--max-body-mb", type=float, default=32.0, help="request body limit in MiB (413 beyond)")
    serve.add_argument("--token-env", default=None, help="environment variable holding the bearer token")
    serve.add_argument("--openrlhf-reward", default=None, help="reward behind POST /get_reward (default: the first)")
    serve.add_argument(
        "--unscorable-score", type=float, default=0.0, help="what /get_reward reports for an unscorable sample"
    )
    serve.add_argument("--drain-timeout-s", type=float, default=300.0, help="on SIGTERM, time for in-flight requests")
    serve.add_argument(
        "--monitor-shadow",
        default=None,
        metavar="SPEC",
        help="watch for reward hacking: shadow-score a sample with this reward (a name, JSON or @FILE); see /monitor",
    )
    serve.add_argument("--monitor-every", type=int, default=1, help="shadow-check every N batches of scored samples")
    serve.add_argument(
        "--monitor-sample", type=int, default=64, help="completions per monitored batch, all shadow-scored (default 64)"
    )
    serve.add_argument(
        "--monitor-reward",
        action="append",
        default=None,
        metavar="NAME",
        help="served reward to monitor (repeatable; default: every served reward)",
    )
    serve.add_argument("--settings", default=None, help="more ServeSettings as JSON, or @FILE (JSON or YAML)")
    serve.add_argument(
        "--ray",
        default=None,
        metavar="auto|ADDRESS",
        help="deploy on a Ray cluster with Ray Serve (needs rewardsmith[ray]) instead of one local process",
    )
    serve.add_argument("--replicas", type=int, default=1, help="Ray Serve replicas with --ray (default 1)")
    serve.add_argument("--replica-cpus", type=float, default=1.0, help="CPUs each Ray Serve replica reserves")
    serve.add_argument(
        "--proxy-location",
        default=None,
        choices=["EveryNode", "HeadOnly", "Disabled"],
        help="where Ray Serve's HTTP proxies listen with --ray (Ray's default: EveryNode)",
    )


def settings_from_args(args: argparse.Namespace):
    from rewardsmith.adapters.runtime.serve.settings import ServeSettings

    values = {
        "host": args.host,
        "port": args.port,
        "workers": args.workers,
        "max_queue": args.max_queue,
        "max_batch": args.max_batch,
        "batch_wait_ms": args.batch_wait_ms,
        "threads": args.threads,
        "chunk_size": args.chunk_size,
        "deadline_s": args.deadline_s,
        "max_body_bytes": int(args.max_body_mb * 1024 * 1024),
        "token_env": args.token_env,
        "openrlhf_reward": args.openrlhf_reward,
        "unscorable_score": args.unscorable_score,
        "drain_timeout_s": args.drain_timeout_s,
        "log_level": "info" if getattr(args, "verbose", False) else "warning",
    }
    shadow = getattr(args, "monitor_shadow", None)
    if shadow:
        spec = shadow_spec(shadow)
        values["monitor"] = {"shadow": spec, "every": args.monitor_every, "sample": args.monitor_sample}
        if args.monitor_reward:
            values["monitor_rewards"] = tuple(args.monitor_reward)
    values.update(load_config_arg(args.settings))
    return ServeSettings.model_validate(values)


def shadow_spec(value: str) -> Any:
    """``--monitor-shadow``: a reward name, inline JSON, or ``@FILE``, a spec file read as every spec file is
    (:func:`rewardsmith.spec_files.read_spec_file`: file references confined to its folder, imports refused)."""
    if value.startswith("@"):
        from rewardsmith.spec_files import read_spec_file

        return read_spec_file(value[1:])
    return load_config_arg(value) if value.startswith("{") else value


def cmd_serve(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    try:
        from rewardsmith.adapters.runtime.serve.runner import run_server
    except ImportError as exc:
        raise ValueError(
            f"rewardsmith serve needs the 'serve' extra (pip install 'rewardsmith[serve]'): {exc}"
        ) from None
    from rewardsmith.adapters.runtime.serve.specs import check_openrlhf_labels, load_served

    try:
        settings = settings_from_args(args)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"invalid serve settings: {problems}") from None
    rewards = load_served(args.spec)
    if settings.openrlhf_reward and settings.openrlhf_reward not in rewards:
        raise ValueError(f"--openrlhf-reward {settings.openrlhf_reward!r} is not served; served: {', '.join(rewards)}")
    check_openrlhf_labels(rewards, settings.openrlhf_reward)  # before Ray Serve's replicas would each refuse
    if args.ray:
        return _serve_on_ray(args, settings)
    return run_server(rewards, settings)


def _serve_on_ray(args: argparse.Namespace, settings) -> int:
    """The same server as Ray Serve replicas; every replica builds the rewards from the spec file itself."""
    try:
        from rewardsmith.adapters.runtime.ray.serve import ClusterUnavailable, serve_on_ray, serve_until_interrupted
    except ImportError as exc:
        raise ValueError(
            f"rewardsmith serve --ray needs the 'ray' extra (pip install 'rewardsmith[ray]'): {exc}"
        ) from None
    if args.replicas < 1:
        raise ValueError("--replicas must be at least 1")
    try:
        url = serve_on_ray(
            args.spec,
            replicas=args.replicas,
            host=args.host,
            port=args.port,
            settings=settings,
            address=args.ray,
            ray_actor_options={"num_cpus": args.replica_cpus},
            proxy_location=args.proxy_location,
        )
    except ClusterUnavailable as exc:
        raise ValueError(f"no Ray cluster at {args.ray!r}: {exc}") from None
    print(f"rewardsmith serve: ready on {url.rstrip('/')} (Ray Serve, {args.replicas} replicas)", flush=True)
    serve_until_interrupted("rewardsmith")
    return 0
