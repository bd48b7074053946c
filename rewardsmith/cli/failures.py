"""How a command that calls models ends when some calls failed: one line on stderr, and exit status 1.

``rlaif pairs``, ``rlaif revise`` and ``audit run`` never record an endpoint failure as a result, so a rerun
of the same command retries exactly what failed; the exit status lets a script notice without parsing text.
"""

from __future__ import annotations

import sys


def report_failures(failed: int, what: str) -> int:
    """Print how many ``what`` failed (if any) and return the command's exit status: 1 if any failed, else 0."""
    if failed:
        print(f"{failed} {what} failed; rerun the same command to retry them", file=sys.stderr)
    return 1 if failed else 0
