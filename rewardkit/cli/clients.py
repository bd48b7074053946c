"""One spelling for choosing a model client on every command: ``--ROLE SPEC`` plus ``--ROLE-base-url`` and
``--ROLE-api-key``, where ROLE is ``judge``, ``policy`` or ``reviser`` and SPEC is ``embedded`` (the packaged
SmolLM2), ``openai:MODEL`` (any OpenAI-compatible endpoint) or ``transformers:PATH`` (an in-process model)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

BACKENDS = ("embedded", "openai", "transformers")


def parse_client_spec(spec: str, flag: str = "--judge") -> tuple[str, str | None]:
    """``embedded`` → (embedded, None); ``openai:MODEL`` / ``transformers:PATH`` → (backend, model)."""
    backend, _, model = spec.partition(":")
    if backend == "embedded":
        return "embedded", model or None
    if backend in ("openai", "transformers") and model:
        return backend, model
    raise ValueError(f"{flag} {spec!r}: use embedded, openai:MODEL or transformers:PATH")


def add_client_args(parser: argparse.ArgumentParser, role: str, what: str, *, default: str | None) -> None:
    """``--ROLE SPEC``, ``--ROLE-base-url URL`` and ``--ROLE-api-key KEY`` for one model the command uses."""
    needed = "" if default else " (required when it is used)"
    parser.add_argument(
        f"--{role}",
        default=default,
        metavar="SPEC",
        help=f"{what}: embedded, openai:MODEL or transformers:PATH{needed}",
    )
    parser.add_argument(f"--{role}-base-url", default=None, help=f"{what}: OpenAI-compatible endpoint URL")
    parser.add_argument(f"--{role}-api-key", default=None, help=f"{what}: API key (default: $OPENAI_API_KEY)")


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
        raise ValueError(f"--{role} is required here (embedded, openai:MODEL or transformers:PATH)")
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
    )
