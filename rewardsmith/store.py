"""The append-only JSONL store every long job resumes from: score files, RLAIF records, audit verdicts.

Rows are appended with one ``write`` and made durable with ``fsync`` before the job moves on. A process killed
at any instant leaves at most one torn last line; reopening cuts it off (:func:`cut_torn_tail`), so every
complete line is work that will not be redone and appending resumes on a line of its own.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


def append_jsonl(path: str | os.PathLike[str], rows: Iterable[dict[str, Any]]) -> None:
    """Append rows and sync them to disk: what returned is on disk, whatever happens next."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def read_appended_jsonl(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Rows of a file written by :func:`append_jsonl`, after repairing a torn last line.

    A last line without its newline (the writer was killed mid-row) is cut off the file first, so appending
    can resume cleanly; any other line that is not a JSON object raises ``ValueError`` naming it.
    """
    path = Path(path)
    if not path.exists():
        return iter(())
    cut_torn_tail(path)
    return _rows_of(path)


def _rows_of(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ValueError(f"{path}: line {lineno} is not a JSON row ({exc})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}: line {lineno} is not a JSON object")
            yield row


def cut_torn_tail(path: Path, chunk: int = 1 << 16) -> None:
    """Truncate ``path`` after its last newline (drops a partial row left by a killed writer)."""
    with path.open("r+b") as fh:
        end = fh.seek(0, os.SEEK_END)
        pos = end
        while pos > 0:
            start = max(0, pos - chunk)
            fh.seek(start)
            block = fh.read(pos - start)
            cut = block.rfind(b"\n")
            if cut >= 0:
                keep = start + cut + 1
                break
            pos = start
        else:
            keep = 0
        if keep != end:
            logger.warning("%s: dropping a torn last line (%d bytes) left by an interrupted run", path, end - keep)
            fh.truncate(keep)
            fh.flush()
            os.fsync(fh.fileno())


class KeyedStore:
    """Durable ``key -> record`` log. Not thread-safe: one writer (the pipeline's event loop)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._records: dict[str, dict[str, Any]] = {}
        self._load()
        self._fh = self.path.open("a", encoding="utf-8")

    def _load(self) -> None:
        if not self.path.exists():
            return
        cut_torn_tail(self.path)
        data = self.path.read_bytes()
        for number, line in enumerate(data.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"{self.path}:{number}: corrupt record ({exc}); remove that line to continue"
                ) from None
            key = record.get("key")
            if not isinstance(key, str):
                raise ValueError(f"{self.path}:{number}: record without a string 'key'")
            # A duplicate can only come from two writers at once; keep the first, as a reader would.
            self._records.setdefault(key, record)

    def __contains__(self, key: str) -> bool:
        return key in self._records

    def __len__(self) -> int:
        return len(self._records)

    def get(self, key: str) -> dict[str, Any] | None:
        return self._records.get(key)

    def records(self) -> Iterator[dict[str, Any]]:
        """Records in the order they were first written."""
        return iter(self._records.values())

    def append(self, key: str, record: dict[str, Any]) -> bool:
        """Durably add ``record`` under ``key``; returns ``False`` (and writes nothing) if the key is done."""
        if key in self._records:
            return False
        full = {"key": key, **record}
        line = json.dumps(full, ensure_ascii=False, sort_keys=False, default=str) + "\n"
        self._fh.write(line)
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._records[key] = full
        return True

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> KeyedStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
