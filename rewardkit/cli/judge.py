"""``rewardkit judge serve`` (the embedded llama.cpp server, foreground) and ``rewardkit judge pair``."""

from __future__ import annotations

import argparse
import json
import signal
import time

from rewardkit.cli.clients import add_client_args, client_from_args


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
    pair.add_argument("--cache-dir", default=None)
    pair.add_argument("--cot", action="store_true", help="chain-of-thought verdict (clamped to 0.4/0.6)")
    pair.set_defaults(func=cmd_pair)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def cmd_serve(args: argparse.Namespace) -> int:
    from rewardkit.judges.clients.embedded import EmbeddedServer

    # SIGTERM (a supervisor, `timeout`) must stop the llama.cpp child too, like Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    with EmbeddedServer(args.model_path, port=args.port) as server:
        print(f"serving {server.model} at {server.base_url} (Ctrl-C to stop)", flush=True)
        print(f"  rewardkit judge pair --judge-base-url {server.base_url} --prompt ... --a ... --b ...", flush=True)
        try:
            while server.running:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        if not server.running:
            print(f"the server exited: {server.log_tail()}", flush=True)
            return 1
    return 0


def cmd_pair(args: argparse.Namespace) -> int:
    from rewardkit.judges.pairwise import PairwiseJudge

    client = client_from_args(args, "judge", cache_dir=args.cache_dir)
    try:
        verdict = PairwiseJudge(client, chain_of_thought=args.cot).judge(
            args.prompt, args.a, args.b, question=args.question
        )
    finally:
        client.close()
    print(json.dumps({"winner": verdict.winner, **verdict.model_dump()}, indent=2))
    print(client.report().summary())
    return 0
