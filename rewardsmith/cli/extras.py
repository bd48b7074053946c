"""Every command's optional extras, checked before it starts work: one line naming the extra, exit 2.

A command declares what it needs with ``parser.set_defaults(needs=...)``: a tuple of extras, or a function of the
parsed arguments that returns them (``--ray`` adds ``ray``). Model clients a command builds (``--judge``,
``--policy``, ``--reviser``) are checked as well, against the packages their backend needs. ``main`` calls
:func:`check_command_needs` before the command runs, so ``audit run`` refuses at once without ``matplotlib``
instead of judging for minutes and dying while it draws the report.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable

from rewardsmith.extras import EXTRA_MODULES, MissingExtra, importable, missing_extra

__all__ = ["EXTRA_MODULES", "MissingExtra", "check_command_needs", "importable", "missing_extra"]

#: The options that name a model client, and the defaults a command gives them when unset.
CLIENT_ROLES = ("judge", "policy", "reviser")

Needs = tuple[str, ...] | Callable[[argparse.Namespace], Iterable[str]]


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
