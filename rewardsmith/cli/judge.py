"""``rewardsmith judge serve`` (the embedded llama.cpp server, foreground) and ``rewardsmith judge pair``.

``judge pair`` writes one JSON document to stdout (the verdict, with the usage report under ``usage``) so it
can be piped into ``jq`` or ``json.loads``; the human-readable usage line goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time

from rewardsmith.cli.clients import add_client_args, add_pairwise_judge_args, client_from_args, pairwise_judge_from_args
from rewardsmith.cli.failures import report_failures


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    judge = subparsers.add_parser("judge", help="LLM judges: serve the embedded judge, judge a pair")
    sub = judge.add_subparsers(metavar="ACTION")

    serve = sub.add_parser("serve", help="run the packaged SmolLM2 judge as an OpenAI-compatible server on 127.0.0.1")
    serve.add_argument("--port", type=int, default=None, help="port (default: a free one)")
    serve.add_argument("--model-path", default=None, help="a GGUF file (default: the packaged SmolLM2-135M-Instruct)")
    serve.set_defaults(func=cmd_serve)

    pair = sub.add_parser("pair", help="judge two responses in both orders and print the verdict as JSON")
    pair.add_argument("--prompt", required=True)
    pair.add_argument("--a", required=True, help="response A")
    pair.add_argument("--b", required=True, help="response B")
    pair.add_argument("--question", default=None, help="comparison question / principle")
    add_client_args(pair, "judge", "the judge", default="embedded")
    add_pairwise_judge_args(pair)
    pair.add_argument("--cache-dir", default=None)
    pair.set_defaults(func=cmd_pair)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def cmd_serve(args: argparse.Namespace) -> int:
    from rewardsmith.judges.base import JudgeError
    from rewardsmith.judges.clients.embedded import EmbeddedServer

    # SIGTERM (a supervisor, `timeout`) must stop the llama.cpp child too, like Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    server = EmbeddedServer(args.model_path, port=args.port)
    try:
        server.start()
    except JudgeError as exc:  # not installed, or a build that crashes on its self-test: the reason and the fix
        print(f"rewardsmith judge serve: {exc}", file=sys.stderr)
        return 1
    with server:
        print(f"serving {server.model} at {server.base_url} (Ctrl-C to stop)", flush=True)
        print(f"  rewardsmith judge pair --judge-base-url {server.base_url} --prompt ... --a ... --b ...", flush=True)
        try:
            while server.running:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        if not server.running:
            crash = server.crash("while serving")
            print(crash or f"the server exited: {server.log_tail()}", file=sys.stderr, flush=True)
            return 1
    return 0


def cmd_pair(args: argparse.Namespace) -> int:
    client = client_from_args(args, "judge", cache_dir=args.cache_dir)
    try:
        judge = pairwise_judge_from_args(args, client)
        verdict = judge.judge(args.prompt, args.a, args.b, question=args.question)
    finally:
        client.close()
    usage = client.report()
    print(json.dumps({"winner": verdict.winner, **verdict.model_dump(), "usage": usage.model_dump()}, indent=2))
    print(usage.summary(), file=sys.stderr)
    return report_failures(sum(order.source == "error" for order in (verdict.ab, verdict.ba)), "judge call(s)")
