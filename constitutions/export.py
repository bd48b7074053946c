"""Export finished RLAIF records as a dataset TRL loads as it is (``datasets`` writes jsonl and parquet)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

EXPORT_FORMATS = ("jsonl", "parquet")


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
