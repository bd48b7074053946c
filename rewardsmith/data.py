"""Data in: any file `datasets` can read, as rows, with read errors that name the file and line.

A file that cannot be read raises ``ValueError`` naming the file (and, for JSON, the first bad line), so
a command can print one clear line instead of the reader's traceback.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rewardsmith.sample_files import sample_path

_BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet", ".tsv": "csv"}
#: the deepest row accepted, the row object itself counted. The real limits are the readers': ``Dataset.from_list``
#: (trainers build their datasets from rows) recurses about 20 frames per nested dict, so it fails past 44 nested
#: dicts from a shallow stack and past 34 from 200 frames down; Arrow's JSON reader refuses past 63 levels, and
#: Parquet's past 49 lists. A row that parses but nests deeper fails here, once, naming its line
MAX_ROW_DEPTH = 32


def load_table(path: str | os.PathLike[str]) -> Any:
    """A local data file as a memory-mapped ``datasets.Dataset`` (jsonl, json, csv, tsv, parquet).

    Rows stay on disk until read, so a large file can be processed batch by batch. ``samples:NAME`` reads a
    bundled sample (:mod:`rewardsmith.sample_files`).
    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` for one that cannot be read.
    """
    path = sample_path(path)
    if not path.exists():
        raise FileNotFoundError(f"no such data file: {path}")
    builder = _BUILDERS.get(path.suffix.lower())
    if builder is None:
        raise ValueError(f"{path}: unsupported data format {path.suffix!r} (use one of {sorted(_BUILDERS)})")
    from datasets import Dataset, load_dataset

    if builder == "json" and path.stat().st_size == 0:
        return Dataset.from_list([])
    kwargs: dict[str, Any] = {"delimiter": "\t"} if path.suffix.lower() == ".tsv" else {}
    try:
        with _quiet_datasets():
            return load_dataset(builder, data_files=str(path), split="train", **kwargs)
    except Exception as exc:  # DatasetGenerationError, ArrowInvalid, ParserError, ...
        raise ValueError(describe_read_error(path, exc)) from exc


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows of a local data file as dicts, read through `datasets` (jsonl, json, csv, tsv, parquet)."""
    table = load_table(path)
    return read_rows(table, range(len(table)), path)


def read_rows(table: Any, indices: Iterable[int], path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows ``indices`` of a table from :func:`load_table` as dicts.

    Some damage only shows when a row is decoded (e.g. a JSON string that is not UTF-8), so this raises
    the same one-line ``ValueError`` as :func:`load_table`.
    """
    indices = list(indices)
    try:
        rows = table.select(indices).to_list()
    except Exception as exc:
        raise ValueError(describe_read_error(Path(path), exc)) from exc
    for index, row in zip(indices, rows, strict=True):
        depth = _depth(row)
        if depth > MAX_ROW_DEPTH:  # `datasets` read it (as Python objects, not Arrow types): later readers cannot
            raise ValueError(f"{path}: {_row_place(Path(path), index)}: {_too_deep(depth)}")
    return rows


def _row_place(path: Path, index: int) -> str:
    """``line N`` of row ``index`` in a JSON-lines file (blank lines are not rows), else ``row N``."""
    if path.suffix.lower() == ".jsonl":
        with path.open("rb") as fh:
            lines = [number for number, raw in enumerate(fh, start=1) if raw.strip()]
        if index < len(lines):
            return f"line {lines[index]}"
    return f"row {index + 1}"


def describe_read_error(path: Path, exc: BaseException) -> str:
    """One line saying why ``path`` could not be read: the first bad JSON line when there is one."""
    if _BUILDERS.get(path.suffix.lower()) == "json":
        where = locate_json_error(path)
        if where is not None:
            return f"{path}: {where}"
    cause = _root_cause(exc)
    if path.suffix.lower() == ".parquet" and "too deeply nested" in str(cause):
        # Parquet's reader stops at 100 schema nodes (a list takes two, a struct one) and cannot even read the
        # footer of such a file, so no column can be named; its own advice (raise a limit) is not one a user has
        return f"{path}: a column nests deeper than Parquet's reader takes (49 lists or 62 structs): flatten it"
    message = str(cause).strip().splitlines()
    detail = message[0] if message else type(cause).__name__
    return f"{path}: cannot read as {path.suffix.lower().lstrip('.')}: {detail}"


def locate_json_error(path: Path) -> str | None:
    """Where a JSON or JSON-lines file stops being readable rows, e.g. ``"line 2: not valid JSON (...)"``.

    ``None`` when every line (or the whole document) parses, i.e. the problem is not the syntax.
    """
    if path.suffix.lower() == ".json":
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            return f"not UTF-8 text (byte {exc.start})"
        if text.lstrip().startswith("["):
            try:
                document = json.loads(text)
            except json.JSONDecodeError as exc:
                return f"line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})"
            except RecursionError:
                return "nested too deeply to read"
            except ValueError as exc:
                return f"a number too long to read ({str(exc).split(':')[0]})"
            rows = document if isinstance(document, list) else []
            for number, row in enumerate(rows, start=1):
                depth = _depth(row)
                if depth > MAX_ROW_DEPTH:
                    return f"row {number}: {_too_deep(depth)}"
            return None
    return _first_bad_line(path)


def _depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0, ``[1]`` is 1), without recursion: rows that parse can
    still be nested past what Python's own recursion in later readers takes."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in item)
    return deepest


def _too_deep(depth: int) -> str:
    return f"nested {depth} levels deep (a row may nest {MAX_ROW_DEPTH} levels, itself included)"


def _first_bad_line(path: Path) -> str | None:
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                return f"line {lineno}: not UTF-8 text (byte {exc.start} of the line)"
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                return f"line {lineno}: not valid JSON ({exc.msg} at column {exc.colno})"
            except RecursionError:  # a row thousands of levels deep: the reader's own error is a traceback
                return f"line {lineno}: nested too deeply to read"
            except ValueError as exc:  # an integer past Python's int-from-text digit limit
                return f"line {lineno}: a number too long to read ({str(exc).split(':')[0]})"
            if not isinstance(row, dict):
                return f"line {lineno}: a JSON {type(row).__name__}, not an object (one row per line)"
            depth = _depth(row)
            if depth > MAX_ROW_DEPTH:
                return f"line {lineno}: {_too_deep(depth)}"
    return None


def _root_cause(exc: BaseException) -> BaseException:
    seen = {id(exc)}
    while True:
        nxt = exc.__cause__ or exc.__context__
        if nxt is None or id(nxt) in seen:
            return exc
        seen.add(id(nxt))
        exc = nxt


@contextlib.contextmanager
def _quiet_datasets() -> Iterator[None]:
    """Silence `datasets`' error log and progress bars while loading: a failure becomes one readable message."""
    import datasets

    logger = logging.getLogger("datasets")
    level = logger.level
    bars = datasets.is_progress_bar_enabled()
    logger.setLevel(logging.CRITICAL)
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        logger.setLevel(level)
        if bars:
            datasets.enable_progress_bars()
