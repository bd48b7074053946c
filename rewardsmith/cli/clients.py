"""One spelling for choosing and configuring model clients and the pairwise judge on every command.

``--ROLE SPEC``, where ROLE is ``judge``, ``policy`` or ``reviser`` and SPEC is ``embedded`` (the packaged SmolLM2),
``openai:MODEL`` (any OpenAI-compatible endpoint) or ``transformers:PATH`` (an in-process model) — one form per
client kind in the table (:data:`~rewardsmith.judges.clients.factory.JUDGE_CLIENTS`). The other flags are the client
options models' fields (:mod:`rewardsmith.judges.clients.options`), read from them, help included: those marked
``role`` as ``--ROLE-NAME`` (``--judge-base-url``, ``--judge-api-key``), those marked ``request`` once per command
for every client it builds (``--timeout``, ``--max-retries``, ``--rpm``, ``--tpm``). A command that builds a
pairwise judge takes the options of :func:`add_pairwise_judge_args`, so ``rlaif pairs``, ``audit run`` and
``judge pair`` configure one judge the same way.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError, create_model
from pydantic.fields import FieldInfo

logger = logging.getLogger(__name__)


def _kinds() -> Iterable[tuple[str, Any]]:
    """``(name, options model)`` of every judge client in the table (a plugin that fails to import is skipped)."""
    from rewardsmith.judges.clients.factory import JUDGE_CLIENTS, options_class

    for name in JUDGE_CLIENTS.names():
        try:
            yield name, options_class(name)
        except (ValueError, ImportError, AttributeError) as exc:
            logger.debug("judge client %r offers no flags: %s", name, exc)


def client_flags(scope: str) -> dict[str, FieldInfo]:
    """The client options the command line offers in ``scope`` (``role`` or ``request``), over every client kind:
    the common ones first, then each kind's own."""
    from rewardsmith.judges.clients.options import ClientOptions, flag_of

    found: dict[str, FieldInfo] = {}
    for options in (ClientOptions, *(kind for _, kind in _kinds())):
        for name, info in options.model_fields.items():
            flag = flag_of(info)
            if flag is not None and flag.scope == scope:
                found.setdefault(name, info)
    return found


def client_specs() -> list[str]:
    """The SPEC forms ``--ROLE`` accepts, one per judge client in the table: ``embedded``, ``openai:MODEL``, ..."""
    from rewardsmith.judges.clients.options import flag_of

    specs = []
    for name, options in _kinds():
        flag = flag_of(options.model_fields["model"])
        specs.append(f"{name}:{flag.metavar}" if flag is not None and flag.metavar else name)
    return specs


def spec_help() -> str:
    """``embedded, openai:MODEL or transformers:PATH``."""
    specs = client_specs()
    return f"{', '.join(specs[:-1])} or {specs[-1]}" if len(specs) > 1 else specs[0]


def parse_client_spec(spec: str, flag: str = "--judge") -> tuple[str, str | None]:
    """``embedded`` → (embedded, None); ``openai:MODEL`` / ``transformers:PATH`` → (backend, model)."""
    backend, _, model = spec.partition(":")
    kinds = dict(_kinds())
    if backend in kinds and (model or not kinds[backend].model_required()):
        return backend, model or None
    raise ValueError(f"{flag} {spec!r}: use {spec_help()}")


def _flag_type(name: str, info: FieldInfo) -> Callable[[str], Any]:
    """An argparse ``type`` that validates a flag's text as its field does (type and bounds), a usage error if not."""
    holder = create_model(f"{name}_flag", value=(info.annotation, info))

    def parse(text: str) -> Any:
        try:
            return holder.model_validate({"value": text}).model_dump()["value"]
        except ValidationError as exc:
            reason = exc.errors()[0]["msg"]
            raise argparse.ArgumentTypeError(f"{text!r}: {reason[:1].lower()}{reason[1:]}") from None

    parse.__name__ = name
    return parse


def _metavar(info: FieldInfo) -> str | None:
    from rewardsmith.judges.clients.options import flag_of

    flag = flag_of(info)
    return flag.metavar if flag is not None else None


def add_client_args(parser: argparse.ArgumentParser, role: str, what: str, *, default: str | None) -> None:
    """``--ROLE SPEC`` and a ``--ROLE-NAME`` flag per ``role`` client option for one model the command uses.

    The first call on a parser also adds the request options (:func:`add_request_args`).
    """
    needed = "" if default else " (required when it is used)"
    parser.add_argument(
        f"--{role}",
        default=default,
        metavar="SPEC",
        help=f"{what}: {spec_help()}{needed}",
    )
    for name, info in client_flags("role").items():
        parser.add_argument(
            f"--{role}-{name.replace('_', '-')}",
            type=_flag_type(name, info),
            default=None,
            metavar=_metavar(info),
            help=f"{what}: {info.description}",
        )
    add_request_args(parser)


def add_request_args(parser: argparse.ArgumentParser) -> None:
    """``--timeout``, ``--max-retries``, ``--rpm``, ``--tpm``: added once per command, applied to each client it builds.

    Unset options keep the client defaults; ``--rpm``/``--tpm`` pace each client on its own.
    """
    if "--timeout" in parser._option_string_actions:
        return
    group = parser.add_argument_group("model requests (every client this command builds)")
    for name, info in client_flags("request").items():
        default = "" if info.default is None else f" (default {info.default:g})"
        group.add_argument(
            f"--{name.replace('_', '-')}",
            type=_flag_type(name, info),
            default=None,
            metavar=_metavar(info),
            help=f"{info.description}{default}",
        )


def request_options(args: argparse.Namespace) -> dict[str, Any]:
    """The request options given on the command line (unset ones are left to the client defaults)."""
    return {name: getattr(args, name) for name in client_flags("request") if getattr(args, name, None) is not None}


def role_options(args: argparse.Namespace, role: str) -> dict[str, Any]:
    """The ``--ROLE-NAME`` client options given on the command line for ``role``."""
    values = {name: getattr(args, f"{role}_{name}", None) for name in client_flags("role")}
    return {name: value for name, value in values.items() if value is not None}


def client_flags_given(args: argparse.Namespace, role: str, *, besides: Iterable[str] = ()) -> list[str]:
    """The client flags the command line set for ``role``, as typed (``--judge-base-url``, ``--rpm``), except the
    options named in ``besides``: for a command that refuses them where no model client is built."""
    skip = set(besides)
    given = [f"--{role}-{name}" for name in role_options(args, role) if name not in skip]
    given += [f"--{name}" for name in request_options(args) if name not in skip]
    return [flag.replace("_", "-") for flag in given]


def client_from_args(
    args: argparse.Namespace,
    role: str,
    *,
    cache_dir: str | Path | None,
    concurrency: int = 4,
    prices: dict[str, Any] | None = None,
) -> Any:
    """The client ``--ROLE`` names, through :func:`rewardsmith.judges.clients.factory.make_client`."""
    from rewardsmith.judges.clients.factory import make_client

    spec = getattr(args, role)
    if spec is None:
        raise ValueError(f"--{role} is required here ({spec_help()})")
    backend, model = parse_client_spec(spec, f"--{role}")
    return make_client(
        backend,
        model=model,
        cache_dir=str(cache_dir) if cache_dir is not None else None,
        concurrency=max(1, concurrency),
        prices=prices or None,
        **role_options(args, role),
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
    """The :class:`~rewardsmith.judges.pairwise.PairwiseJudge` the options describe, built as ``rlaif pairs`` does."""
    from rewardsmith.constitutions.runners import build_pairwise_judge

    return build_pairwise_judge(
        client,
        constitution,
        template=args.judge_template,
        use_logprobs=not args.no_logprobs,
        chain_of_thought=args.chain_of_thought,
        cot_clamp=tuple(args.cot_clamp),
        state_dir=state_dir,
    )
