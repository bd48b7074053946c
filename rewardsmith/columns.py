"""Dataset columns as a reward receives them: TRL's column-wise keyword arguments split into one row per sample.

A trainer passes every dataset column as a list aligned with the completions, in whatever container its data
loader produced (lists, numpy arrays, pandas Series, tensors). A column that does not align is not dropped in
silence: each row records why it is absent (:attr:`Row.misaligned`), so the reason of an unscorable sample can name
the misalignment. A gold column that did not arrive at all, or arrived empty, is named with the setting that fixes
it (:func:`name_missing_columns`): a trainer ignores ``None``, so a misnamed column would otherwise train on nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sized
from collections.abc import Set as AbstractSet
from typing import Any

from pydantic import BaseModel

from rewardsmith.types import RewardResult

#: Keyword arguments TRL passes that are not per-sample dataset columns.
TRAINER_KWARGS = frozenset({"trainer_state", "log_extra", "log_metric", "environments"})


class Row(dict):
    """One sample's dataset columns (``prompt`` included), as a reward receives them.

    ``misaligned`` maps each column the caller passed that could not be split per sample (wrong length,
    not a sequence) to why, e.g. ``"column 'solution' has 1 value for 2 completions"``; such a column is
    absent from the row. Plain dicts work wherever a ``Row`` does (see :func:`column_problem`).
    """

    def __init__(self, *args: Any, misaligned: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.misaligned: Mapping[str, str] = misaligned or {}


def column_problem(row: Mapping[str, Any], column: str) -> str | None:
    """Why ``column`` is absent from ``row`` when the caller passed it misaligned; ``None`` otherwise."""
    misaligned = getattr(row, "misaligned", None)
    return misaligned.get(column) if isinstance(misaligned, Mapping) else None


def as_column(values: Any) -> list[Any] | None:
    """``values`` as a list of plain Python values, or ``None`` when it is not a sequence of samples.

    Lists and tuples, numpy arrays, pandas Series, torch tensors and other sized iterables qualify;
    strings, bytes, mappings, sets and scalars (a 0-d array included) do not.
    """
    if values is None or isinstance(values, (str, bytes, bytearray, Mapping, AbstractSet)):
        return None
    try:
        if isinstance(values, (list, tuple)):
            return [_plain(v) for v in values]
        tolist = getattr(values, "tolist", None)
        if callable(tolist):
            converted = tolist()
            return converted if isinstance(converted, list) else None
        if isinstance(values, Sized) and isinstance(values, Iterable):
            return [_plain(v) for v in values]
    except Exception:  # an object that claims to be a sequence but cannot be read is not a column
        return None
    return None


def rows_from_columns(n: int, kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Split TRL's column-wise kwargs into one :class:`Row` per sample; ``prompts`` becomes ``prompt``.

    A column that does not hold exactly ``n`` values is left out of every row and recorded in
    ``Row.misaligned``, so a reward can say why it is absent instead of calling it missing.
    """
    columns: dict[str, list[Any]] = {}
    misaligned: dict[str, str] = {}
    for key, values in kwargs.items():
        if key in TRAINER_KWARGS:
            continue
        column = "prompt" if key == "prompts" else key
        aligned = as_column(values)
        if aligned is None:
            misaligned[column] = f"column {column!r} is {type(values).__name__}, not one value per completion"
        elif len(aligned) != n:
            misaligned[column] = f"column {column!r} has {_count(len(aligned), 'value')} for {_count(n, 'completion')}"
        else:
            columns[column] = aligned
    return [Row({c: v[i] for c, v in columns.items()}, misaligned=misaligned) for i in range(n)]


def misaligned_reasons(rows: list[dict[str, Any]], columns: Iterable[str]) -> list[str | None]:
    """Per row, why a declared ``columns`` entry is absent because the caller passed it misaligned (else ``None``)."""
    wanted = tuple(columns)
    out: list[str | None] = []
    for row in rows:
        problems = [p for p in (column_problem(row, c) for c in wanted if c not in row) if p]
        out.append("; ".join(problems) if problems else None)
    return out


def explain_misaligned(results: list[RewardResult], rows: list[dict[str, Any]]) -> list[RewardResult]:
    """An unscorable result in a row with misaligned columns says so: the misalignment is the likely cause."""
    return [_explained(result, row) for result, row in zip(results, rows, strict=True)]


def column_setting(config: BaseModel, column: str) -> str | None:
    """The config field that names ``column`` (``gold_column``, ``tests_column``, ``reference_column``), so a
    reason can quote the setting that fixes a missing column; ``None`` when no field names it."""
    for field, value in config:
        if value == column and field.endswith("column"):
            return field
    return None


def name_missing_columns(
    results: list[RewardResult],
    rows: list[dict[str, Any]],
    columns: Iterable[str],
    config: BaseModel,
    warned: set[str],
) -> tuple[list[RewardResult], list[str]]:
    """Unscorable samples whose gold column did not arrive (or arrived empty) say so, with the fix.

    A dataset without the gold column (GSM8K ships ``answer``, not ``solution``) makes every sample unscorable;
    a trainer ignores ``None`` and trains on nothing. So each such reason names the columns that did arrive and the
    setting that fixes it, and the first batch where it happens gives one warning per column to log (``warned`` holds
    the columns already warned about, one set per reward instance).
    """
    out = list(results)
    warnings: list[str] = []
    for column in columns:
        blank = [result.score is None and _blank(row, column) for result, row in zip(out, rows, strict=True)]
        # the whole batch blank and unscorable is the column's doing; a single row, when its reason says so
        hit = [i for i, b in enumerate(blank) if b and (all(blank) or _mentions(out[i].reason, column))]
        if not hit:
            continue
        fix, warning = _column_fix(column, rows, column_setting(config, column))
        for i in hit:
            out[i] = out[i].model_copy(update={"reason": f"{out[i].reason}; {fix}"})
        if warning and column not in warned:
            warned.add(column)
            warnings.append(f"{len(hit)} of {len(rows)} samples unscorable: {warning}")
    return out, warnings


def _column_fix(column: str, rows: list[dict[str, Any]], setting: str | None) -> tuple[str, str | None]:
    """The fix a reason quotes for a blank ``column``, and the batch-wide warning (``None`` when only some rows
    are blank: a row without gold is that row's problem, not a misconfiguration)."""
    arrived = sorted({c for row in rows for c in row})
    remedy = (
        f"set {setting} to the column that holds it" if setting else f"pass the column {column!r}"
    ) + f" (columns that arrived: {', '.join(arrived) or 'none'})"
    if all(column not in row for row in rows):
        fix = f"the data has no column {column!r}: {remedy}"
        return fix, fix
    if all(_blank(row, column) for row in rows):
        fix = f"column {column!r} is empty in every row: {remedy}"
        return fix, fix
    return f"column {column!r} is missing or empty in this row", None


def _plain(value: Any) -> Any:
    """A numpy/torch scalar or array as the Python value it holds; anything else unchanged."""
    if isinstance(value, (str, bytes, bytearray, int, float, bool, list, tuple, dict)) or value is None:
        return value
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        try:
            return tolist()
        except Exception:
            return value
    return value


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def _explained(result: RewardResult, row: Mapping[str, Any]) -> RewardResult:
    misaligned = getattr(row, "misaligned", None)
    if result.score is not None or not misaligned:
        return result
    notes = [note for note in misaligned.values() if note not in result.reason]
    if not notes:
        return result
    cause = [note for column, note in misaligned.items() if note in notes and _mentions(result.reason, column)]
    reason = f"{'; '.join(cause)} ({result.reason})" if cause else f"{result.reason}; {'; '.join(notes)}"
    return result.model_copy(update={"reason": reason})


def _blank(row: Mapping[str, Any], column: str) -> bool:
    """``column`` is absent from ``row`` (and not misaligned, which has its own reason) or holds nothing."""
    if column not in row:
        return column_problem(row, column) is None
    value = row[column]
    return value is None or (
        isinstance(value, (str, list, tuple, dict)) and not (value.strip() if isinstance(value, str) else value)
    )


def _mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text) is not None
