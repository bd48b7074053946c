"""Append-only, keyed JSONL: the crash-safe record of what a pipeline has finished.

Each finished item is one line ``{"key": ..., ...}`` written with a single ``write`` and made durable
with ``fsync`` before the pipeline moves on. A process killed at any instant leaves at most one torn
last line, which :class:`KeyedStore` cuts off when it reopens the file; every complete line is an
item that will not be redone. Resume is therefore "skip the keys already present", and the same
key is never written twice. The final dataset is exported from this file through ``datasets``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

EXPORT_FORMATS = ("jsonl", "parquet")


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
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            logger.warning(
                "%s: dropping a torn last line (%d bytes) left by an interrupted run", self.path, len(data) - end
            )
            with self.path.open("r+b") as fh:
                fh.truncate(end)
                fh.flush()
                os.fsync(fh.fileno())
        for number, line in enumerate(data[:end].splitlines(), start=1):
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


def export_dataset(
    rows: Iterable[dict[str, Any]], out_dir: str | os.PathLike[str], name: str, formats: Iterable[str] = EXPORT_FORMATS
) -> dict[str, Path]:
    """Write ``rows`` with ``datasets`` as ``out_dir/name.{jsonl,parquet}``; returns the written paths.

    Files are written under a temporary name and renamed, so a reader never sees half a dataset.
    """
    from datasets import Dataset

    rows = list(rows)
    unknown = set(formats) - set(EXPORT_FORMATS)
    if unknown:
        raise ValueError(f"unknown export format(s) {sorted(unknown)}; choose from {list(EXPORT_FORMATS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dataset = Dataset.from_list(rows)
    written: dict[str, Path] = {}
    for fmt in formats:
        path = out / f"{name}.{fmt}"
        tmp = path.with_name(path.name + ".tmp")
        if fmt == "jsonl":
            if rows:
                dataset.to_json(str(tmp), lines=True, force_ascii=False, double_precision=15)
            else:
                tmp.write_text("")
        else:
            dataset.to_parquet(str(tmp))
        os.replace(tmp, path)
        written[fmt] = path
    return written
