"""One spelling for choosing and configuring model clients and the pairwise judge on every command.

``--ROLE SPEC`` plus ``--ROLE-base-url`` and ``--ROLE-api-key``, where ROLE is ``judge``, ``policy`` or
``reviser`` and SPEC is ``embedded`` (the packaged SmolLM2), ``openai:MODEL`` (any OpenAI-compatible endpoint)
or ``transformers:PATH`` (an in-process model). A command that builds a client also takes ``--timeout``,
``--max-retries``, ``--rpm`` and ``--tpm`` once, for every client it builds (the fields of
:class:`~rewardkit.judges.clients.factory.JudgeClientConfig`). A command that builds a pairwise judge takes
the options of :func:`add_pairwise_judge_args`, so ``rlaif pairs``, ``audit run`` and ``judge pair`` configure
one judge the same way.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def client_specs() -> list[str]:
    """The SPEC forms ``--ROLE`` accepts, one per judge client in the table: ``embedded``, ``openai:MODEL``, ..."""
    from rewardkit.judges.clients.factory import JUDGE_CLIENTS

    backends = [JUDGE_CLIENTS.get(name) for name in JUDGE_CLIENTS.names()]
    return [f"{b.name}:{b.argument}" if b.argument else b.name for b in backends]


def spec_help() -> str:
    """``embedded, openai:MODEL or transformers:PATH``."""
    specs = client_specs()
    return f"{', '.join(specs[:-1])} or {specs[-1]}" if len(specs) > 1 else specs[0]


def parse_client_spec(spec: str, flag: str = "--judge") -> tuple[str, str | None]:
    """``embedded`` → (embedded, None); ``openai:MODEL`` / ``transformers:PATH`` → (backend, model)."""
    from rewardkit.judges.clients.factory import JUDGE_CLIENTS

    backend, _, model = spec.partition(":")
    if backend in JUDGE_CLIENTS.names() and (model or not JUDGE_CLIENTS.get(backend).model_help):
        return backend, model or None
    raise ValueError(f"{flag} {spec!r}: use {spec_help()}")


def add_client_args(parser: argparse.ArgumentParser, role: str, what: str, *, default: str | None) -> None:
    """``--ROLE SPEC``, ``--ROLE-base-url URL`` and ``--ROLE-api-key KEY`` for one model the command uses.

    The first call on a parser also adds the request options (:func:`add_request_args`).
    """
    needed = "" if default else " (required when it is used)"
    parser.add_argument(
        f"--{role}",
        default=default,
        metavar="SPEC",
        help=f"{what}: {spec_help()}{needed}",
    )
    parser.add_argument(f"--{role}-base-url", default=None, help=f"{what}: OpenAI-compatible endpoint URL")
    parser.add_argument(f"--{role}-api-key", default=None, help=f"{what}: API key (default: $OPENAI_API_KEY)")
    add_request_args(parser)


def _positive(kind: type) -> Any:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be positive")
        return value

    return parse


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more")
    return value


def add_request_args(parser: argparse.ArgumentParser) -> None:
    """``--timeout``, ``--max-retries``, ``--rpm``, ``--tpm``: added once per command, applied to each client it builds.

    Unset options keep the client defaults; ``--rpm``/``--tpm`` pace each client on its own.
    """
    if "--timeout" in parser._option_string_actions:
        return
    from rewardkit.judges.clients.factory import JudgeClientConfig

    defaults = JudgeClientConfig.model_fields
    group = parser.add_argument_group("model requests (every client this command builds)")
    group.add_argument(
        "--timeout",
        type=_positive(float),
        default=None,
        metavar="S",
        help=f"seconds per request (default {defaults['timeout'].default:g})",
    )
    group.add_argument(
        "--max-retries",
        type=_non_negative_int,
        default=None,
        metavar="N",
        help=f"retries on 429, 5xx, timeouts and malformed answers (default {defaults['max_retries'].default})",
    )
    group.add_argument("--rpm", type=_positive(float), default=None, help="client-side requests per minute")
    group.add_argument("--tpm", type=_positive(float), default=None, help="client-side tokens per minute")


def request_options(args: argparse.Namespace) -> dict[str, Any]:
    """The request options given on the command line (unset ones are left to the client defaults)."""
    names = ("timeout", "max_retries", "rpm", "tpm")
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def client_from_args(
    args: argparse.Namespace,
    role: str,
    *,
    cache_dir: str | Path | None,
    concurrency: int = 4,
    prices: dict[str, Any] | None = None,
) -> Any:
    """The client ``--ROLE`` names, through :func:`rewardkit.judges.clients.factory.make_client`."""
    from rewardkit.judges.clients.factory import make_client

    spec = getattr(args, role)
    if spec is None:
        raise ValueError(f"--{role} is required here ({spec_help()})")
    backend, model = parse_client_spec(spec, f"--{role}")
    options: dict[str, Any] = {"cache_dir": str(cache_dir) if cache_dir is not None else None}
    api_key = getattr(args, f"{role}_api_key", None)
    if api_key:
        options["api_key"] = api_key
    if prices:
        options["prices"] = prices
    return make_client(
        backend,
        model=model,
        base_url=getattr(args, f"{role}_base_url", None),
        concurrency=max(1, concurrency),
        **options,
        **request_options(args),
    )


def add_pairwise_judge_args(parser: argparse.ArgumentParser) -> None:
    """How the pairwise judge reads and answers: template, log-probs, chain of thought (as in ``rlaif pairs``)."""
    parser.add_argument(
        "--judge-template", "--template", dest="judge_template", default=None,
        help="judge prompt template: a packaged name (pairwise, pairwise_cot) or a .jinja path",
    )  # fmt: skip
    parser.add_argument(
        "--no-logprobs", action="store_true", help="read the verdict from the answer text only, not option log-probs"
    )
    parser.add_argument(
        "--chain-of-thought", "--cot", dest="chain_of_thought", action="store_true",
        help="the judge reasons first; its verdicts are clamped to --cot-clamp",
    )  # fmt: skip
    parser.add_argument(
        "--cot-clamp",
        type=float,
        nargs=2,
        default=(0.4, 0.6),
        metavar=("LOW", "HIGH"),
        help="P(first is better) a chain-of-thought verdict is clamped to (default 0.4 0.6)",
    )


def pairwise_judge_from_args(
    args: argparse.Namespace, client: Any, *, constitution: Any = None, state_dir: Path | None = None
) -> Any:
    """The :class:`~rewardkit.judges.pairwise.PairwiseJudge` the options describe, built as ``rlaif pairs`` does."""
    from rewardkit.constitutions.runners import build_pairwise_judge

    return build_pairwise_judge(
        client,
        constitution,
        template=args.judge_template,
        use_logprobs=not args.no_logprobs,
        chain_of_thought=args.chain_of_thought,
        cot_clamp=tuple(args.cot_clamp),
        state_dir=state_dir,
    )
