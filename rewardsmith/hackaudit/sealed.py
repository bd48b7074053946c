"""Sealed findings: each exploit the search found, as a self-contained record with a hash, replayable after a fix.

A finding is worth keeping only if it can be checked again: after the reward is fixed, CI replays every finding
against the new spec and fails while any is still paid (``rewardsmith audit replay FINDINGS.jsonl --spec S``). A
record carries all it needs (the row's columns, the completion, the threshold), so a replay needs no data file, and
what it was found against (the spec's digest, the library version, the score and the reason). The seal is the
SHA-256 of the record's fields: a record edited after the audit (a completion softened, a score lowered) no longer
matches its seal and the replay refuses the file rather than re-score something no audit found. It is a checksum,
not a signature: it catches edits, not someone who recomputes it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FINDINGS_FILE = "findings.jsonl"
FORMAT = "rewardsmith-finding/1"
SEALED_FIELDS = (
    "format",
    "row",
    "row_data",
    "completion",
    "spec_digest",
    "reward_version",
    "threshold",
    "score",
    "reason",
    "origin",
)


def seal_of(record: Mapping[str, Any]) -> str:
    """The SHA-256 of the record's sealed fields, in a canonical JSON form."""
    body = {k: record.get(k) for k in SEALED_FIELDS}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def seal_findings(
    findings: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]], spec_digest: str, threshold: float
) -> list[dict[str, Any]]:
    """The search's findings as sealed records (the row's own columns inside each)."""
    from rewardsmith import __version__

    sealed = []
    for f in findings:
        record = {
            "format": FORMAT,
            "row": f["row"],
            "row_data": {k: v for k, v in rows[f["row"]].items() if k != "completion"},
            "completion": f["completion"],
            "spec_digest": spec_digest,
            "reward_version": f"rewardsmith {__version__}",
            "threshold": threshold,
            "score": f["score"],
            "reason": f["reason"],
            "origin": f["origin"],
        }
        sealed.append({**record, "seal": seal_of(record)})
    return sealed


def write_findings(path: str | os.PathLike[str], records: Sequence[Mapping[str, Any]]) -> Path:
    from rewardsmith.audit.report import _atomic_write

    path = Path(path)
    _atomic_write(path, "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records))
    return path


def read_findings(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The sealed records of ``path``; a line that is no sealed finding, or whose seal does not match, stops the
    replay with one line naming it (a tampered file proves nothing either way)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such findings file (audit reward --search-budget N writes one)")
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not JSON ({exc.msg}); findings files are JSON lines") from None
        if not isinstance(record, dict) or record.get("format") != FORMAT or "seal" not in record:
            raise ValueError(f"{path}:{number}: not a sealed finding (format {FORMAT!r} with a seal)")
        if record["seal"] != seal_of(record):
            raise ValueError(
                f"{path}:{number}: the seal does not match the record (edited after the audit); "
                "rerun the audit to write findings afresh"
            )
        records.append(record)
    return records


@dataclass(frozen=True)
class Replayed:
    """One finding re-scored: ``pays`` when the spec still scores it at least the sealed threshold."""

    record: dict[str, Any]
    score: float | None
    reason: str

    @property
    def pays(self) -> bool:
        return self.score is not None and self.score >= self.record["threshold"] - 1e-9

    @property
    def verdict(self) -> str:
        if self.score is None:
            return "UNSCORABLE"
        return "STILL PAYS" if self.pays else "fixed"


def replay(records: Sequence[dict[str, Any]], reward: Any) -> list[Replayed]:
    """Re-score every sealed completion on its own row with ``reward`` (a spec's combined reward)."""
    out: list[Replayed] = []
    for start in range(0, len(records), 64):
        batch = records[start : start + 64]
        keys = dict.fromkeys(k for r in batch for k in r["row_data"])
        columns = {k: [r["row_data"].get(k) for r in batch] for k in keys}
        results = reward.details([r["completion"] for r in batch], **columns)
        out += [Replayed(r, v.score, str(v.reason or "")) for r, v in zip(batch, results, strict=True)]
    return out
