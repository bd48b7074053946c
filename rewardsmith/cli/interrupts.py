"""What a long command says when it is resumed, and when Ctrl-C stops it: what was saved and the exact command
that resumes it.

Every long job writes its progress as it goes (append-only stores that fsync each record, checkpoints written
atomically, metrics logs closed after each line), so a stop loses at most the work in flight. What a user needs at
that moment is where the work is, how to continue, and a prompt exit. A normal interpreter exit is not prompt: it
joins the judge's worker threads, which finish their requests (with retries once the embedded server is gone), and
tears down torch and the tokenizers: 8-19 s measured after Ctrl-C. So after the message the process ends with
``os._exit``; the processes rewardsmith starts end with it (the embedded judge's server and the hard-timeout
workers watch their parent, bubblewrap runs with ``--die-with-parent``).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

INTERRUPTED = 130


def command_line(argv: Sequence[str] | None = None, *, drop: Sequence[str] = (), add: Sequence[str] = ()) -> str:
    """The command as typed (``rewardsmith`` + its arguments), shell-quoted, less ``drop`` flags, plus ``add``."""
    words = [w for w in (sys.argv[1:] if argv is None else argv) if w not in drop]
    words += [w for w in add if w not in words]
    return shlex.join(["rewardsmith", *words])


def count_records(path: Path) -> int:
    """Complete lines of an append-only JSONL store (a torn last line is not a record)."""
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


#: A store and what one of its records is ("judged pairs"), for the messages.
Store = tuple[Path, str]


def _held(stores: Sequence[Store]) -> list[str]:
    return [f"{n} {noun} in {path}" for path, noun in stores if (n := count_records(path))]


def stores_saved(stores: Sequence[Store]) -> str:
    """``N <noun> saved in PATH`` for each store that has records, or that nothing was saved yet."""
    held = _held(stores)
    return "; ".join(held) + " (saved)" if held else "nothing was saved yet"


def say_resuming(stores: Sequence[Store]) -> None:
    """One line when a run starts over saved work: where it resumes from, and that the saved work is not redone."""
    held = _held(stores)
    if held:
        print(f"resuming from {'; '.join(held)}: those are not redone", file=sys.stderr, flush=True)


@contextlib.contextmanager
def on_interrupt(saved: Callable[[], str], resume: Callable[[], str]) -> Iterator[None]:
    """On Ctrl-C: print ``interrupted: <saved()>`` and ``resume with: <resume()>``, then end with status 130."""
    try:
        yield
    except KeyboardInterrupt:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        print(f"\ninterrupted: {saved()}\nresume with: {resume()}", file=sys.stderr, flush=True)
        os._exit(INTERRUPTED)
