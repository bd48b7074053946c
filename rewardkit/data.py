"""Data in and out: any file `datasets` can read, and append-safe JSONL out."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

_BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet", ".tsv": "csv"}


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows of a local data file as dicts, read through `datasets` (jsonl, json, csv, parquet)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such data file: {path}")
    builder = _BUILDERS.get(path.suffix.lower())
    if builder is None:
        raise ValueError(f"{path}: unsupported data format {path.suffix!r} (use one of {sorted(_BUILDERS)})")
    if builder == "json" and path.stat().st_size == 0:
        return []
    from datasets import load_dataset

    kwargs: dict[str, Any] = {"delimiter": "\t"} if path.suffix.lower() == ".tsv" else {}
    ds = load_dataset(builder, data_files=str(path), split="train", **kwargs)
    return ds.to_list()


def write_jsonl(path: str | os.PathLike[str], rows: list[dict[str, Any]]) -> None:
    """Write rows atomically: a crash never leaves a half-written file under the final name."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
