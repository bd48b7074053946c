"""Rows that parse but nest deeper than their readers take: one error naming the file and the line (or row).

The real limits: ``datasets`` reads a JSON-lines file whose columns mix types as Python objects, so a 900-deep row
loads and only fails later, in ``Dataset.from_list`` (a RecursionError past about 44 nested dicts), pickling (about
500) or pydantic's serializer (254); a file of one shape fails in Arrow ("Recursion level in ArrowSchema struct
exceeded", past 63 levels, no line); Parquet's reader stops at 49 nested lists with advice no user of this library
can follow. These tests run the real loader at the limit, one past it, and the real consumer.
"""

from __future__ import annotations

import json

import pytest

from rewardsmith.data import MAX_ROW_DEPTH, read_records


def nested(levels: int, kind: str = "list") -> object:
    value: object = 1
    for _ in range(levels):
        value = [value] if kind == "list" else {"a": value}
    return value


GOOD = '{"prompt": "p", "solution": "1"}'  # a string column: a nested row beside it is read as Python objects


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_the_deepest_row_arrow_takes_loads(tmp_path, kind):
    path = tmp_path / "rows.jsonl"
    row = {"prompt": "p", "solution": nested(MAX_ROW_DEPTH - 1, kind)}  # the row object is the last level
    path.write_text(GOOD + "\n" + json.dumps(row) + "\n")
    assert read_records(path)[1]["solution"] == row["solution"]


@pytest.mark.parametrize(
    ("levels", "kind"),
    [(MAX_ROW_DEPTH, "list"), (MAX_ROW_DEPTH, "dict"), (899, "list")],
    ids=["one-past-list", "one-past-dict", "900-deep"],
)
def test_a_row_one_level_past_the_limit_is_one_error_naming_the_line(tmp_path, levels, kind):
    path = tmp_path / "rows.jsonl"
    lines = [GOOD, GOOD, json.dumps({"prompt": "p", "solution": nested(levels, kind)}), GOOD]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError) as caught:
        read_records(path)
    assert str(caught.value) == (
        f"{path}: line 3: nested {levels + 1} levels deep (a row may nest {MAX_ROW_DEPTH} levels, itself included)"
    )


@pytest.mark.parametrize("good_first", [True, False], ids=["mixed-types", "one-shape"])
def test_the_error_names_the_line_whichever_reader_datasets_took(tmp_path, good_first):
    path = tmp_path / "rows.jsonl"
    deep = json.dumps({"prompt": "p", "solution": nested(899)})
    path.write_text((GOOD + "\n\n" + deep if good_first else deep) + "\n")
    with pytest.raises(ValueError) as caught:
        read_records(path)
    assert str(caught.value).startswith(f"{path}: line {3 if good_first else 1}: nested 900 levels deep")


def test_the_limit_leaves_room_for_the_trainers_dataset_builder():
    from datasets import Dataset

    def at_depth(frames: int) -> object:  # a trainer calls from deep in its own stack
        if frames:
            return at_depth(frames - 1)
        return Dataset.from_list([{"prompt": "p", "solution": nested(MAX_ROW_DEPTH - 1, "dict")}])

    assert len(at_depth(150)) == 1


def test_a_json_document_names_the_row(tmp_path):
    path = tmp_path / "rows.json"
    rows = [{"prompt": "p"}, {"prompt": nested(MAX_ROW_DEPTH)}]
    path.write_text(json.dumps(rows, indent=1))
    with pytest.raises(ValueError) as caught:
        read_records(path)
    assert str(caught.value).startswith(f"{path}: row 2: nested {MAX_ROW_DEPTH + 1} levels deep")


def test_parquet_rows_past_the_limit_and_past_its_reader_are_one_line(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    fine, deep, deepest = (tmp_path / f"{name}.parquet" for name in ("fine", "deep", "deepest"))
    pq.write_table(pa.table({"prompt": ["p"], "g": [nested(MAX_ROW_DEPTH - 1)]}), fine)
    pq.write_table(pa.table({"prompt": ["p", "q"], "g": [nested(40), nested(40)]}), deep)
    pq.write_table(pa.table({"prompt": ["p"], "g": [nested(50)]}), deepest)
    assert read_records(fine)[0]["g"] == nested(MAX_ROW_DEPTH - 1)
    with pytest.raises(ValueError) as caught:
        read_records(deep)
    assert str(caught.value).startswith(f"{deep}: row 1: nested 41 levels deep")
    with pytest.raises(ValueError) as caught:
        read_records(deepest)
    assert str(caught.value) == (
        f"{deepest}: a column nests deeper than Parquet's reader takes (49 lists or 62 structs): flatten it"
    )
