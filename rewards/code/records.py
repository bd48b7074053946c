"""The record protocol: how a sandboxed harness reports to the host, and how the host reads it.

A harness writes ONE line ``<nonce><json>`` straight to fd 1. The nonce is fresh per run, so output the program
prints before it cannot pass for a record unless the program read the nonce (it can: the solution owns its
process); that is why a record from the solution's process only ever carries *values* (outputs for given inputs),
never a verdict. Every record is parsed with :func:`values.load_json` (bounded depth, digits and size): a malformed
or oversized record fails that run with a reason, it never raises into the batch.
"""

from __future__ import annotations

import secrets
from typing import Any

from rewardsmith.rewards.code.values import PlainValueError, decode_plain, load_json
from rewardsmith.sandboxes.base import RunResult, RunStatus

#: the kinds of operation the trusted stage asks the solution's process to perform (see harness_inside)
QUERY_KINDS = frozenset({"site", "call", "get", "set", "text", "eq", "ne"})
MAX_QUERIES = 20_000


def new_nonce() -> str:
    return "RK" + secrets.token_hex(16)


def records(stdout: bytes, nonce: str) -> list[dict]:
    """Every nonce-prefixed JSON record in ``stdout``; a malformed one is returned as ``{"invalid": why}``."""
    found = []
    marker = nonce.encode()
    for line in stdout.split(b"\n"):
        if line.startswith(marker):
            try:
                record = load_json(line[len(marker) :])
            except PlainValueError as exc:
                record = {"invalid": str(exc)}
            found.append(record if type(record) is dict else {"invalid": "not a mapping"})
    return found


def single_record(result: RunResult, nonce: str) -> tuple[dict | None, str]:
    """The run's one record, or ``None`` and why (missing, duplicated, malformed, or the process did not finish)."""
    if result.status is not RunStatus.OK:
        return None, f"{result.status.value}: {result.message}".strip(": ")
    found = records(result.stdout, nonce)
    if len(found) != 1:
        return None, "no result reported" if not found else several_records(found)
    if "invalid" in found[0]:
        return None, f"malformed result record: {found[0]['invalid']}"
    return found[0], ""


def several_records(found: list[dict]) -> str:
    """Why a run reported more than once: every forked copy of the harness reports, so a fork loop that met the
    process limit shows as many records with fork errors; otherwise the solution wrote records of its own."""
    errors = [error_text(record, "") for record in found]
    if any("BlockingIOError" in error or "Resource temporarily unavailable" in error for error in errors):
        return f"resource exhaustion: the solution forked until the process limit ({len(found)} processes reported)"
    return f"{len(found)} result records: the solution forked or wrote records of its own"


def error_text(record: dict | None, default: str) -> str:
    """The ``error`` a harness reported, only when it is a short string (a solution can write any shape)."""
    error = (record or {}).get("error")
    return error[:120] if type(error) is str else default


def decode_entry(entry: Any) -> None:
    """Validate one answer of the solution's process: a plain value, a builtin exception name, or a marker."""
    if type(entry) is not dict or len(entry) != 1:
        raise PlainValueError("malformed answer")
    ((tag, body),) = entry.items()
    if tag == "value":
        decode_plain(body)
    elif tag == "raise":
        # a builtin exception's name, or the builtin bases of a class of the solution's
        names = body if type(body) is list and 0 < len(body) <= 8 else [body]
        if not all(type(n) is str and n.isidentifier() and len(n) <= 64 for n in names):
            raise PlainValueError("malformed exception name")
    elif tag == "object":
        # [id of the first call that returned this object, traits of its class]: see the harness's _RkStub
        if not (type(body) is list and len(body) == 2 and type(body[0]) is str and len(body[0]) <= 80):
            raise PlainValueError("malformed object answer")
        if type(body[1]) is not int or not 0 <= body[1] <= 7:
            raise PlainValueError("malformed object answer")
    elif tag != "opaque" or body is not True:
        raise PlainValueError(f"unknown answer tag {str(tag)[:20]!r}")


def decode_answers(obj: Any, asked: set[str]) -> dict[str, dict]:
    """The solution's answers to the calls it was asked (``query id -> entry``), validated; every asked id must be
    answered and nothing else may be (raises :class:`PlainValueError`)."""
    if type(obj) is not dict or len(obj) > len(asked):
        raise PlainValueError("answers are not a mapping of the asked calls")
    if obj.keys() != asked:
        raise PlainValueError("the solution's run did not answer every call it was asked")
    for entry in obj.values():
        decode_entry(entry)
    return obj


def decode_check_results(record: dict | None, expected: int) -> list[dict] | None:
    """The trusted stage's per-check results, or ``None`` when the record does not have their shape."""
    results = (record or {}).get("results")
    if type(results) is not list or len(results) != expected:
        return None
    for result in results:
        if type(result) is not dict or len(result) != 1:
            return None
        ((tag, body),) = result.items()
        if tag == "passed" and type(body) is bool:
            continue
        if tag in ("undecidable", "errored") and type(body) is str and len(body) <= 200:
            continue
        if tag == "asked" and type(body) is list and len(body) <= MAX_QUERIES and all(_is_query(q) for q in body):
            continue
        return None
    return results


def _is_query(query: Any) -> bool:
    return (
        type(query) is list
        and len(query) == 4
        and type(query[0]) is str
        and query[1] in QUERY_KINDS
        and type(query[2]) is str
    )
