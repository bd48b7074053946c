"""Code extraction: the fence rules as a verdict table, and time linear in the completion's size.

Extraction runs on the host, outside every sandbox timeout, so a completion built to make it slow (thousands of
fences that never close) must cost time proportional to its length. The bound is measured against a 1 KB
completion of the same shape in the same test, never as an absolute time.
"""

from __future__ import annotations

import time

import pytest

from rewardsmith.rewards.code.extract import code_blocks, extract_code
from tests.support.timing import slack


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("```python\na\n```", [("python", "a\n")]),
        ("  ~~~js\nx\n  ~~~  ", [("js", "x\n")]),
        ("```py\nunclosed\n```python\nstill inside", [("py", "unclosed\n```python\nstill inside")]),
        ("```\nA\n````\nB\n```\nC\n```py", [("", "A\n"), ("", "C\n```py")]),  # a longer fence closes; one never
        # closed runs to the end
        ("````\nA\n```\nB\n````", [("", "A\n```\nB\n")]),  # a shorter one does not
        ("```\nA\n~~~\n```", [("", "A\n~~~\n")]),  # nor one of the other character
        ("```py\n```", [("py", "")]),
        ("```py\n   \n", []),  # an unclosed fence with a blank body offers nothing
        ("text ```py\nnot a fence", []),
        ("```py", []),  # a fence on the last line opens nothing
        ("```py\r\nx\r\n```\r\n", [("py", "x\r\n")]),
    ],
)
def test_fence_rules(text: str, expected: list[tuple[str, str]]) -> None:
    assert code_blocks(text) == expected


@pytest.mark.parametrize(
    ("text", "language", "which", "allow_untagged", "expected"),
    [
        ("```python\na\n```\n```\nb\n```", "python", "last", True, "a\n"),  # tagged beats untagged
        ("```\nb\n```", "python", "last", False, None),
        ("```cpp\nc\n```", "python", "last", True, None),
        ("```c++\nc\n```", "cpp", "first", True, "c\n"),
        ("```python\n\n```", "python", "last", True, None),  # an empty block is no program
        ("   ", "python", "raw", True, None),
    ],
)
def test_block_choice(text: str, language: str, which: str, allow_untagged: bool, expected: str | None) -> None:
    assert extract_code(text, language, which, allow_untagged) == expected  # type: ignore[arg-type]


ADVERSARIAL = {
    "unclosed tagged fences": "```x\n",
    "tags that never close": "```python lorem\n~~~js\n",
    "growing fences": "```\n````\n`````\n",
    "indented fences": " " * 40 + "```py" + " " * 40 + "\n",
    "one long line": "`" * 1000,
    "no newline at all": "~" * 1000,
}


def best_time(text: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for language in ("python", "cpp"):
            extract_code(text, language, "last")
            extract_code(text, language, "first", allow_untagged=False)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_extraction_time_is_linear_in_size(shape: str) -> None:
    unit = ADVERSARIAL[shape]

    def sized(n_bytes: int) -> str:
        return (unit * (n_bytes // len(unit) + 1))[:n_bytes]

    baseline = best_time(sized(1_000), repeats=50)
    for size in (60_000, 600_000):
        took = best_time(sized(size), repeats=3)
        # Linear: at most 10x the per-byte cost of the 1 KB baseline, room for cache effects and a shared machine
        # (a quadratic scan's per-byte cost is 60x and 600x the baseline's at these sizes).
        bound = 10 * baseline * size / 1_000 + slack(0.05)
        assert took <= bound, f"{shape}: {size} bytes took {took:.3f} s, bound {bound:.3f} s (1 KB: {baseline:.6f} s)"
