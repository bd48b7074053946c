"""The KodCode/pytest translation against real pytest: the same score for right and wrong solutions, or refused.

Every construct the translator accepts is run twice, by real pytest (``tests/support/real_pytest.py``: the case's
solution imported as ``solution``, as KodCode's harness does) and by ``code_tests``; the scores must be equal for
the right solution and for each wrong one. Every construct it cannot reproduce exactly makes the sample unscorable
(``None``) with the construct named in the reason — never a test dropped or checked more loosely.

Sources: the constructs table is written here, one row per construct, in the shapes KodCode ships (``from solution
import f``, pytest functions, ``Test*`` classes, ``unittest.TestCase``). ``tests/data/kodcode_demo_rows.jsonl.gz``
holds 10 rows of KodCode's own pipeline output (KodCode-AI/kodcode, Apache-2.0, commit 1d3515b, ``demo/
Complete_Verified_KodCode_*/…_Complete.json``; each row names its file and index): the row's ``test_code`` with
every distinct trial solution the pipeline generated for it (some fail its tests) and one mutated solution.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rewardsmith import get_reward
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.real_pytest import pytest_scores

DEMO_ROWS = Path(__file__).parents[1] / "data" / "kodcode_demo_rows.jsonl.gz"
DEMO_SAMPLE = 6  # rows scored here (each with its trial solutions and a mutation); the file holds 10

SIGN = "def sign(x):\n    if x == 0:\n        raise ValueError('zero')\n    return 1 if x > 0 else -1\n"
SIGN_WRONG = "def sign(x):\n    return 1\n"  # no raise, wrong for negatives
SIGN_TYPE = "def sign(x):\n    if x == 0:\n        raise TypeError('zero')\n    return 1 if x > 0 else -1\n"
MEAN = "def mean(xs):\n    return sum(xs) / len(xs)\n"
MEAN_OFF = "def mean(xs):\n    return sum(xs) / len(xs) + 2e-6 * len(xs)\n"  # off by more than an absolute 1e-6

EXACT = [
    # (construct, test module, [solutions]) — real pytest decides every expected score
    (
        "pytest class with methods (was dropped: '1/1 passed' for wrong code)",
        "from solution import sign\n\nclass TestSign:\n    def test_pos(self):\n        assert sign(5) == 1\n\n"
        "    def test_neg(self):\n        assert sign(-5) == -1\n",
        [SIGN, SIGN_WRONG],
    ),
    (
        "pytest class with setup_method and teardown_method",
        "from solution import sign\n\nclass TestSign:\n    def setup_method(self, method):\n        self.x = -3\n\n"
        "    def teardown_method(self):\n        self.x = None\n\n    def test_neg(self):\n"
        "        assert sign(self.x) == -1\n",
        [SIGN, SIGN_WRONG],
    ),
    (
        "unittest.TestCase with setUp",
        "import unittest\nfrom solution import sign\n\nclass SignCase(unittest.TestCase):\n    def setUp(self):\n"
        "        self.x = -2\n\n    def test_neg(self):\n        self.assertEqual(sign(self.x), -1)\n\n"
        "    def test_pos(self):\n        self.assertEqual(sign(3), 1)\n",
        [SIGN, SIGN_WRONG],
    ),
    (
        "stacked parametrize (the product) and a skipped test",
        "import pytest\nfrom solution import sign\n\n@pytest.mark.parametrize('x', [1, 2])\n"
        "@pytest.mark.parametrize('k', [1, -1])\ndef test_scaled(x, k):\n    assert sign(k * x) == k\n\n"
        "@pytest.mark.skip(reason='later')\ndef test_later():\n    assert sign(0) == 0\n",
        [SIGN, SIGN_WRONG],
    ),
    (
        "pytest.raises with a builtin exception (and the wrong type)",
        "import pytest\nfrom solution import sign\n\ndef test_zero():\n    with pytest.raises(ValueError):\n"
        "        sign(0)\n\ndef test_one():\n    assert sign(1) == 1\n",
        [SIGN, SIGN_WRONG, SIGN_TYPE],
    ),
    (
        "pytest.approx with abs only (abs is the whole tolerance, even for large values)",
        "import pytest\nfrom solution import mean\n\ndef test_big():\n"
        "    assert mean([1e6, 1e6 + 2]) == pytest.approx(1e6 + 1, abs=1e-6)\n\n"
        "def test_list():\n    assert [mean([1, 2]), mean([3])] == pytest.approx([1.5, 3.0])\n",
        [MEAN, MEAN_OFF],
    ),
    (
        "__main__ guard calling pytest.main, module-level helper and constant",
        "import pytest\nfrom solution import sign\n\nCASES = [(3, 1), (-3, -1)]\n\ndef check(x, want):\n"
        "    assert sign(x) == want\n\ndef test_cases():\n    for x, want in CASES:\n        check(x, want)\n\n"
        "if __name__ == '__main__':\n    pytest.main([__file__])\n",
        [SIGN, SIGN_WRONG],
    ),
    (
        "imported name missing from the solution (pytest: the module does not import)",
        "from solution import sign, helper\n\ndef test_pos():\n    assert sign(2) == 1\n",
        [SIGN + "\ndef helper():\n    return 0\n", SIGN],
    ),
    (
        "import solution, attribute calls",
        "import solution\n\ndef test_neg():\n    assert solution.sign(-1) == -1\n",
        [SIGN, SIGN_WRONG],
    ),
]

REFUSED = [
    # (construct, test module, words in the reason)
    (
        "raises match",
        "import pytest\nfrom solution import f\n\ndef test_a():\n    with pytest.raises(ValueError, "
        "match='neg'):\n        f(-1)\n",
        "match=",
    ),
    (
        "raises as excinfo",
        "import pytest\nfrom solution import f\n\ndef test_a():\n    with pytest.raises(ValueError) "
        "as e:\n        f(-1)\n    assert 'neg' in str(e.value)\n",
        "as excinfo",
    ),
    (
        "raises custom class",
        "import pytest\nfrom solution import f, Oops\n\ndef test_a():\n    with pytest.raises(Oops):\n        f(-1)\n",
        "builtin exception",
    ),
    (
        "caught exception read",
        "from solution import f\n\ndef test_a():\n    try:\n        f(-1)\n    except ValueError "
        "as e:\n        assert str(e) == 'neg'\n",
        "except ... as e",
    ),
    (
        "fixture",
        "import pytest\nfrom solution import f\n\n@pytest.fixture\ndef x():\n    return 1\n\n"
        "def test_a(x):\n    assert f(x)\n",
        "fixture",
    ),
    (
        "capsys",
        "from solution import f\n\ndef test_a(capsys):\n    f(1)\n    assert capsys.readouterr().out\n",
        "capsys",
    ),
    (
        "skipif",
        "import pytest\nfrom solution import f\n\n@pytest.mark.skipif(True, reason='x')\ndef test_a():\n"
        "    assert f(1)\n",
        "skipif",
    ),
    ("xfail", "import pytest\nfrom solution import f\n\n@pytest.mark.xfail\ndef test_a():\n    assert f(1)\n", "xfail"),
    (
        "parametrize indirect",
        "import pytest\nfrom solution import f\n\n@pytest.mark.parametrize('x', [1], "
        "indirect=True)\ndef test_a(x):\n    assert f(x)\n",
        "parametrize",
    ),
    (
        "pytest.warns",
        "import pytest\nfrom solution import f\n\ndef test_a():\n    with pytest.warns(UserWarning):\n        f(1)\n",
        "pytest.warns",
    ),
    ("generator test", "from solution import f\n\ndef test_a():\n    yield f(1)\n", "generator"),
    (
        "test defined under if",
        "import sys\nfrom solution import f\n\nif sys.version_info > (3,):\n    def test_a():\n"
        "        assert f(1) == 0\n",
        "test_a",
    ),
    (
        "imported test_ name",
        "from heapq import merge as test_merge\nfrom solution import f\n\ndef test_a():\n    assert f(1)\n",
        "test_merge",
    ),
    (
        "test class with __init__",
        "from solution import f\n\nclass TestF:\n    def __init__(self):\n        self.k = 1\n\n"
        "    def test_a(self):\n        assert f(1)\n",
        "__init__",
    ),
    (
        "setup_class",
        "from solution import f\n\nclass TestF:\n    @classmethod\n    def setup_class(cls):\n"
        "        cls.k = 1\n\n    def test_a(self):\n        assert f(self.k)\n",
        "setup_class",
    ),
    (
        "test class with a base",
        "from solution import f\n\nclass Base:\n    def test_b(self):\n        assert f(2)\n\n"
        "class TestF(Base):\n    def test_a(self):\n        assert f(1)\n",
        "base classes",
    ),
    (
        "unittest subTest",
        "import unittest\nfrom solution import f\n\nclass C(unittest.TestCase):\n    def test_a(self):\n"
        "        for x in (1, 2):\n            with self.subTest(x=x):\n                self.assertTrue(f(x))\n",
        "subTest",
    ),
    (
        "assertRaisesRegex",
        "import unittest\nfrom solution import f\n\nclass C(unittest.TestCase):\n    def test_a(self):"
        "\n        with self.assertRaisesRegex(ValueError, 'neg'):\n            f(-1)\n",
        "assertRaisesRegex",
    ),
    (
        "files",
        "from solution import f\n\ndef test_a():\n    with open('data.txt', 'w') as h:\n        h.write('1')\n"
        "    assert f('data.txt') == 1\n",
        "open",
    ),
    (
        "timing",
        "import time\nfrom solution import f\n\ndef test_a():\n    t = time.perf_counter()\n    f(1)\n"
        "    assert time.perf_counter() - t < 1\n",
        "time.perf_counter",
    ),
    (
        "timeit",
        "from timeit import timeit\nfrom solution import f\n\ndef test_a():\n    assert timeit(lambda: f(1), "
        "number=1) < 1\n",
        "timeit",
    ),
    (
        "random.seed",
        "import random\nfrom solution import f\n\ndef test_a():\n    random.seed(1)\n    assert f(1) == 1\n",
        "random.seed",
    ),
    (
        "stdout capture",
        "import io, sys\nfrom solution import f\n\ndef test_a():\n    sys.stdout = io.StringIO()\n"
        "    f(1)\n    assert sys.stdout.getvalue()\n",
        "sys.stdout",
    ),
    (
        "mock",
        "from unittest.mock import patch\nfrom solution import f\n\ndef test_a():\n    with patch('solution.g'):"
        "\n        assert f(1)\n",
        "mock",
    ),
    (
        "third-party import",
        "import numpy as np\nfrom solution import f\n\ndef test_a():\n    assert f(np.int64(1))\n",
        "numpy",
    ),
    ("identity", "from solution import f\n\ndef test_a():\n    xs = [1]\n    assert f(xs) is xs\n", "identity"),
    ("keyword-only parameter", "from solution import f\n\ndef test_a(*, k=1):\n    assert f(k)\n", "signature"),
    (
        "approx nan_ok unknown keyword",
        "import pytest\nfrom solution import f\n\ndef test_a():\n    assert f(1) == pytest.approx(1, tolerance=1)\n",
        "pytest.approx",
    ),
]


@pytest.fixture(scope="module")
def reward():
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")
    instance = get_reward("code_tests", concurrency=4, timeout_s=20)
    yield instance
    instance.close()


def demo_rows() -> list[dict]:
    with gzip.open(DEMO_ROWS, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def mutated(solution: str, test: str) -> str:
    """The solution with its tested function's results perturbed (first name the test imports from solution)."""
    name = test.split("from solution import", 1)[1].split("\n", 1)[0].split(",")[0].strip()
    return (
        f"{solution}\n\n_rk_original = {name}\n\ndef {name}(*args, **kwargs):\n"
        "    result = _rk_original(*args, **kwargs)\n"
        "    if isinstance(result, bool):\n        return not result\n"
        "    if isinstance(result, (int, float)):\n        return result + 1\n"
        "    if isinstance(result, (list, str, tuple)) and len(result) > 1:\n        return result[::-1] + result[:1]\n"
        "    return [result]\n"
    )


def cases() -> dict[str, tuple[str, str, str]]:
    """``{case id: (source, test module, solution)}`` for every accepted construct and every demo row."""
    table = {}
    for index, (construct, test, solutions) in enumerate(EXACT):
        for number, solution in enumerate(solutions):
            table[f"c{index:02d}s{number}"] = (construct, test, solution)
    for index, row in enumerate(demo_rows()[:DEMO_SAMPLE]):
        solutions = [*row["solutions"], mutated(row["solutions"][0], row["test"])]
        for number, solution in enumerate(solutions):
            table[f"k{index:02d}s{number}"] = (row["source"], row["test"], solution)
    return table


def test_translation_scores_as_real_pytest_does(reward, tmp_path):
    table = cases()
    real = pytest_scores({case: (test, solution) for case, (_, test, solution) in table.items()}, tmp_path)
    ids = list(table)
    results = reward.score_batch([f"```python\n{table[c][2]}\n```" for c in ids], [{"test": table[c][1]} for c in ids])
    verdicts = [(c, table[c][0][-70:], real[c], r.score, r.reason[:160]) for c, r in zip(ids, results, strict=True)]
    differ = [v for v in verdicts if v[2] is None or v[3] is None or abs(v[2] - v[3]) > 1e-9]
    assert differ == [], "\n".join(map(str, differ))
    scores = {c: real[c] for c in ids}
    assert {scores[f"c{i:02d}s0"] for i in range(len(EXACT))} == {1.0}, "each construct's right solution passes"
    assert all(scores[f"c{i:02d}s1"] < 1.0 for i in range(len(EXACT))), "each wrong solution fails"
    demo = [c for c in ids if c.startswith("k")]
    assert {scores[c] for c in demo} >= {0.0, 1.0}, "the demo rows have passing and failing solutions"


@pytest.mark.parametrize(("construct", "source", "words"), REFUSED, ids=[r[0] for r in REFUSED])
def test_constructs_the_harness_cannot_reproduce_are_refused_by_name(reward, construct, source, words):
    (result,) = reward.score_batch(["```python\ndef f(*a, **k):\n    return 1\n```"], [{"test": source}])
    assert result.score is None, (construct, result.reason)
    assert words in result.reason, (construct, result.reason)
