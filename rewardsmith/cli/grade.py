"""``rewardsmith grade``: score one completion with a spec and write Harbor's verifier files.

A Harbor task's ``tests/test.sh`` calls it inside the task's container::

    rewardsmith grade --spec /tests/spec.yaml --completion /app/answer.txt --row-file /tests/row.json

It writes ``/logs/verifier/reward.json`` (``--out`` elsewhere) and ``reason.json`` beside it
(:mod:`rewardsmith.adapters.protocols.harbor`). Exit status: 0 when the sample scored (whatever the reward: the file
carries it), 1 when it is unscorable (no reward file, so Harbor records no valid reward rather than a 0), 2 for a
usage or configuration error (no reward file either; the one-line error names the fix). Only the package itself is
needed: no server, no extra.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

#: Completions larger than this are the completion's fault: every term scores 0.0 without reading them.
DEFAULT_MAX_COMPLETION_MB = 16.0


def add_commands(sub: argparse._SubParsersAction) -> None:
    grade = sub.add_parser("grade", help="score one completion with a spec; write Harbor's reward.json and reason")
    grade.add_argument("--spec", required=True, help="reward spec file (YAML/JSON: a list of terms or {rewards: ...})")
    grade.add_argument(
        "--completion", default="-", metavar="FILE|-", help="file holding the completion, or - for stdin (default)"
    )
    row = grade.add_mutually_exclusive_group()
    row.add_argument("--row", default=None, metavar="JSON", help="the gold columns as a JSON object")
    row.add_argument("--row-file", default=None, metavar="FILE", help="file holding the gold columns as a JSON object")
    grade.add_argument(
        "--missing-as-empty",
        action="store_true",
        help="a --completion file that does not exist is an empty completion (the agent wrote nothing), not an error",
    )
    grade.add_argument("--out", default=None, metavar="DIR", help="verifier folder (default /logs/verifier)")
    grade.add_argument(
        "--max-completion-mb",
        type=float,
        default=DEFAULT_MAX_COMPLETION_MB,
        help=f"a larger completion scores 0.0 unread (default {DEFAULT_MAX_COMPLETION_MB:g})",
    )
    grade.set_defaults(func=cmd_grade)


def cmd_grade(args: argparse.Namespace) -> int:
    from rewardsmith.adapters.protocols.harbor import DEFAULT_VERIFIER_DIR, clear_rewards, write_verdict
    from rewardsmith.adapters.protocols.verdict import TermVerdict, Verdict, check_columns, score_spec
    from rewardsmith.adapters.spec import load_spec

    out = Path(args.out or DEFAULT_VERIFIER_DIR)
    clear_rewards_quietly(out, clear_rewards)  # fail closed: no number stands in the folder until this run's own
    try:
        if args.max_completion_mb <= 0:
            raise ValueError("--max-completion-mb must be positive")
        spec = load_spec(args.spec)
        row = read_row(args.row, args.row_file)
        check_columns(row, "--row" if args.row is not None else f"--row-file {args.row_file}")
        limit = int(args.max_completion_mb * 1024 * 1024)
        completion, oversize = read_completion(args.completion, limit, missing_as_empty=args.missing_as_empty)
    except (ValueError, OSError) as exc:
        clear_rewards_quietly(out, clear_rewards)
        if isinstance(exc, OSError):  # an unreadable file is a usage error (exit 2), never "unscorable" (exit 1)
            name = getattr(exc, "filename", None) or "a file"
            raise ValueError(f"cannot read {name}: {exc.strerror or exc}") from None
        raise
    if oversize is not None:
        terms = [term.build() for term in spec.rewards]
        verdict = Verdict(
            tuple(TermVerdict(r.__name__, w, 0.0, oversize) for r, w in zip(terms, spec.reward_weights(), strict=True))
        )
    else:
        try:
            verdict = score_spec(spec, [completion], {key: [value] for key, value in row.items()})[0]
        except Exception as exc:  # rewards guard themselves; this guards the guard: no number, the reason says why
            verdict = Verdict((TermVerdict("grade", 1.0, None, f"internal error: {type(exc).__name__}: {exc}"),))
    try:
        written = write_verdict(verdict, out)
    except OSError as exc:  # the verifier folder cannot be written: a usage error, whatever the verdict
        raise ValueError(f"cannot write the verdict to {out}: {exc.strerror or exc}") from None
    if written is None:
        where = out / "reason.json"
        print(f"rewardsmith grade: {verdict.reason} (no reward written; reason in {where})", file=sys.stderr)
        return 1
    print(f"reward {verdict.reward:g} -> {written}")
    return 0


def clear_rewards_quietly(out: Path, clear: Any) -> None:
    """Leave no reward file that was there before this run (a script line, or the policy that could write the
    folder): on every way out that is not this run's own reward (a usage error, an unscorable sample, a crash while
    scoring) Harbor finds no number. A folder we cannot touch is left."""
    try:
        if out.is_dir():
            clear(out)
    except OSError:
        pass


def read_row(inline: str | None, path: str | None) -> dict[str, Any]:
    """The gold columns: a JSON object given inline or in a file (none: no gold columns)."""
    if inline is None and path is None:
        return {}
    where = "--row" if inline is not None else f"--row-file {path}"
    try:
        text = inline if inline is not None else Path(path or "").read_text(encoding="utf-8")
        data = json.loads(text)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise ValueError(f"{where}: nested too deeply to read") from None
    except ValueError as exc:  # an integer past Python's int-from-text digit limit
        raise ValueError(f"{where}: holds a number too long to read ({str(exc).split(':')[0]})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where}: a JSON {type(data).__name__}, not an object of gold columns")
    return data


def read_completion(source: str, limit: int, *, missing_as_empty: bool = False) -> tuple[str, str | None]:
    """The completion text, and why it was not read when it is over ``limit`` bytes.

    Bytes that are not UTF-8 are replaced (U+FFFD): they are the model's output, scored as the text it shows. A
    missing file is an error (a wrong path in ``test.sh`` must not score every sample) unless ``missing_as_empty``.
    """
    if source != "-" and missing_as_empty and not Path(source).exists():
        return "", None
    if source == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise ValueError("no completion: give --completion FILE, or pipe the completion into stdin")
        data = sys.stdin.buffer.read(limit + 1)
    else:
        with open(source, "rb") as fh:
            data = fh.read(limit + 1)
    if len(data) > limit:
        return "", f"the completion is over {limit} bytes (--max-completion-mb): not read, scored 0.0"
    return data.decode("utf-8", errors="replace"), None
