"""Every command's optional extras, checked before it starts work: one line naming the extra, exit 2.

A command declares what it needs with ``parser.set_defaults(needs=...)``: a tuple of extras, or a function of the
parsed arguments that returns them (``--ray`` adds ``ray``). Model clients a command builds (``--judge``,
``--policy``, ``--reviser``) are checked as well, against the packages their backend needs. ``main`` calls
:func:`check_command_needs` before the command runs, so ``audit run`` refuses at once without ``matplotlib``
instead of judging for minutes and dying while it draws the report.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable, Iterable

#: The modules each extra brings (pyproject.toml's optional dependencies), found without importing them.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "sandbox": ("pyseccomp",),
    "docker": ("docker",),
    "judge": ("openai",),
    "judge-local": ("transformers", "torch"),
    "trl": ("trl", "transformers", "torch"),
    "audit": ("matplotlib",),
    "serve": ("fastapi", "uvicorn", "prometheus_client", "httpx"),
    "ray": ("ray",),
    "instructions": ("langdetect",),
}

#: The options that name a model client, and the defaults a command gives them when unset.
CLIENT_ROLES = ("judge", "policy", "reviser")

Needs = tuple[str, ...] | Callable[[argparse.Namespace], Iterable[str]]


class MissingExtra(ValueError):
    """A command needs an optional extra that is not installed (the message names it and the install)."""


def importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def missing_extra(extra: str, what: str) -> str | None:
    """``"<what> needs the 'audit' extra (matplotlib missing): pip install 'rewardsmith[audit]'"``, or None."""
    absent = [module for module in EXTRA_MODULES[extra] if not importable(module)]
    if not absent:
        return None
    return f"{what} needs the '{extra}' extra ({', '.join(absent)} missing): pip install 'rewardsmith[{extra}]'"


def command_name(args: argparse.Namespace) -> str:
    return "rewardsmith " + " ".join(getattr(args, "command_path", ()) or ("command",))


def check_command_needs(args: argparse.Namespace) -> None:
    """Raise :class:`MissingExtra` for the first extra the parsed command needs and lacks."""
    what = command_name(args)
    needs: Needs = getattr(args, "needs", ())
    for extra in needs(args) if callable(needs) else needs:
        problem = missing_extra(extra, what)
        if problem:
            raise MissingExtra(problem)
    for role in CLIENT_ROLES:
        spec = getattr(args, role, None)
        if isinstance(spec, str) and spec:
            check_client_needs(spec, role, what)


def check_client_needs(spec: str, role: str, what: str) -> None:
    """Raise :class:`MissingExtra` when the backend of client ``spec`` (``openai:MODEL``, ...) cannot run here."""
    from rewardsmith.judges.clients.factory import missing_backend_packages

    backend = spec.partition(":")[0]
    problem = missing_backend_packages(backend)  # None for a name that is no judge client: parsing reports it
    if problem:
        raise MissingExtra(f"{what} --{role} {spec}: {problem}")


def tag_commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> None:
    """Record each sub-command's name path (``("audit", "run")``) in its defaults, for the messages above."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                child.set_defaults(command_path=(*path, name))
                tag_commands(child, (*path, name))
