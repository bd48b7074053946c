"""Identity, equality, hash and truth of the solution's objects in the trusted check: decided exactly, or refused.

Program tests run in a process that never loads the solution: its objects are proxies there and its plain values
copies. Comparing two proxies by Python's own identity made ``assert mirror(root) is not root`` (or ``!=``) pass for
a mirror that returns its input. Each row below is scored by ``code_tests`` and by the reference that runs test and
solution in one process (real pytest for KodCode modules; one ``exec`` for MBPP-style programs, as MBPP's own
harness does): the scores must agree for right and wrong solutions, or the sample is refused (``None``) with the
construct named. Rows are written here; the tree shape is KodCode's ``TreeNode`` tasks (``from solution import
TreeNode, mirror_tree``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rewardsmith import get_reward
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.real_pytest import pytest_scores

TREE = (
    "class TreeNode:\n    def __init__(self, val=0, left=None, right=None):\n"
    "        self.val = val\n        self.left = left\n        self.right = right\n\n"
)
MIRROR_NEW = TREE + (
    "def mirror_tree(root):\n    if root is None:\n        return None\n"
    "    return TreeNode(root.val, mirror_tree(root.right), mirror_tree(root.left))\n"
)
MIRROR_SAME = TREE + "def mirror_tree(root):\n    return root\n"  # wrong: the input itself, not a mirrored copy
MIRROR_INPLACE = TREE + (
    "def mirror_tree(root):\n    if root is not None:\n        root.left, root.right = root.right, root.left\n"
    "        mirror_tree(root.left)\n        mirror_tree(root.right)\n    return root\n"
)
ONE = "class Thing:\n    pass\n\n_one = Thing()\n\ndef make():\n    return _one\n"  # one shared object
FRESH = "class Thing:\n    pass\n\ndef make():\n    return Thing()\n"  # a new object per call
SORT_COPY = "def sort_copy(xs):\n    return sorted(xs)\n"
SORT_SAME = "def sort_copy(xs):\n    xs.sort()\n    return xs\n"
VEC = (
    "class Vec:\n    def __init__(self, x):\n        self.x = x\n\n    def __eq__(self, other):\n"
    "        return isinstance(other, Vec) and other.x == self.x\n\n    __hash__ = None\n\n"
    "def double(v):\n    return Vec(v.x * 2)\n"
)
ALWAYS_EQ = "class Yes:\n    def __eq__(self, other):\n        return True\n\ndef f(x):\n    return Yes()\n"
STACK = "class Stack:\n    def __len__(self):\n        return 0\n\ndef empty():\n    return Stack()\n"
POINT = (
    "class Point:\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n\n"
    "    def __str__(self):\n        return f'({self.x}, {self.y})'\n"
)
POINT_SWAPPED = POINT.replace("({self.x}, {self.y})", "({self.y}, {self.x})")
CHECK = "\n\ndef check(x):\n    if x < 0:\n        raise Bad('negative')\n    return x\n"
BAD = "class Bad(ValueError):\n    pass" + CHECK
BAD_KEY = "class Bad(KeyError):\n    pass" + CHECK
BAD_MIXED = "class Bad(ValueError, KeyError):\n    pass" + CHECK

KODCODE = [
    # (construct, pytest module, [solutions]): real pytest decides every expected score
    (
        "!= between the result and its input (was 1.0 for a mirror returning its input)",
        "from solution import TreeNode, mirror_tree\n\ndef test_new_tree():\n    root = TreeNode(1, TreeNode(2))\n"
        "    assert mirror_tree(root) != root\n    assert mirror_tree(root).right.val == 2\n",
        [MIRROR_NEW, MIRROR_SAME, MIRROR_INPLACE],
    ),
    (
        "== between the result and its input (an in-place mirror)",
        "from solution import TreeNode, mirror_tree\n\ndef test_in_place():\n    root = TreeNode(1, TreeNode(2))\n"
        "    assert mirror_tree(root) == root\n    assert root.right.val == 2\n",
        [MIRROR_INPLACE, MIRROR_NEW, MIRROR_SAME],
    ),
    (
        "unittest assertIsNot / assertIs on the solution's objects",
        "import unittest\nfrom solution import TreeNode, mirror_tree\n\nclass MirrorCase(unittest.TestCase):\n"
        "    def test_new(self):\n        root = TreeNode(1)\n        self.assertIsNot(mirror_tree(root), root)\n\n"
        "    def test_same_left(self):\n        leaf = TreeNode(2)\n        m = mirror_tree(TreeNode(1, leaf))\n"
        "        self.assertIsNot(m.right, leaf)\n",
        [MIRROR_NEW, MIRROR_SAME],
    ),
    (
        "a set of the solution's objects (identity hash)",
        "from solution import make\n\ndef test_one():\n    assert len({make(), make(), make()}) == 1\n",
        [ONE, FRESH],
    ),
    (
        "membership of the solution's objects in a list",
        "from solution import make\n\ndef test_distinct():\n    first = make()\n    assert make() not in [first]\n",
        [FRESH, ONE],
    ),
    (
        "pytest.raises of a builtin class, the solution raising its own subclass",
        "import pytest\nfrom solution import check\n\ndef test_raises():\n    with pytest.raises(ValueError):\n"
        "        check(-1)\n\ndef test_value():\n    assert check(2) == 2\n",
        [BAD, BAD_KEY, BAD_MIXED],
    ),
    (
        "pytest.raises(LookupError) for a subclass of two builtins",
        "import pytest\nfrom solution import check\n\ndef test_raises():\n    with pytest.raises(LookupError):\n"
        "        check(-1)\n",
        [BAD_MIXED, BAD],
    ),
]

PROGRAMS = [
    # (construct, MBPP-style asserts, [solutions]): one exec of solution + test decides every expected score
    (
        "'is not' between the result and its input",
        ["root = TreeNode(1, TreeNode(2))\nassert mirror_tree(root) is not root"],
        [MIRROR_NEW, MIRROR_SAME, MIRROR_INPLACE],
    ),
    (
        "'is' between two results",
        ["assert make() is make()"],
        [ONE, FRESH],
    ),
    (
        "a simple assert comparing two results by identity",
        ["assert make() is not make()"],
        [FRESH, ONE],
    ),
    (
        "'is not None' / 'is True' on values that crossed as copies",
        ["xs = sort_copy([3, 1, 2])\nassert xs is not None\nassert (xs == [1, 2, 3]) is True"],
        [SORT_COPY, "def sort_copy(xs):\n    return None\n"],
    ),
    (
        "'is None' on a result",
        ["root = TreeNode(1)\nassert mirror_tree(root).left is None"],
        [MIRROR_NEW, TREE + "def mirror_tree(root):\n    return TreeNode(0, root)\n"],
    ),
    (
        "== and != between two objects whose class defines __eq__: the solution's own comparison",
        ["v = Vec(3)\nassert double(v) == Vec(6)\nassert double(v) != Vec(7)\nassert Vec(6) in [Vec(1), double(v)]"],
        [VEC, VEC.replace("v.x * 2", "v.x + 2")],
    ),
    (
        "str() of an object, written by its own __str__",
        ["assert str(Point(1, 2)) == '(1, 2)'"],
        [POINT, POINT_SWAPPED],
    ),
    (
        "an f-string and print of an object",
        ["p = Point(1, 2)\nprint(p)\nassert f'{p}!' == '(1, 2)!'"],
        [POINT, POINT_SWAPPED],
    ),
    (
        "printing the solution's objects in a loop (one round asks every text)",
        ["ps = [Point(i, i) for i in range(12)]\nfor p in ps:\n    print(p)\nassert str(ps[3]) == '(3, 3)'"],
        [POINT, POINT_SWAPPED.replace("({self.y}, {self.x})", "[{self.x}, {self.y}]")],
    ),
    (
        "except of a builtin class, the solution raising its own subclass",
        ["try:\n    check(-1)\n    caught = False\nexcept ValueError:\n    caught = True\nassert caught"],
        [BAD, BAD_KEY],
    ),
]

REFUSED = [
    # (construct, tests, solution, words the reason must hold): undecidable in the trusted process, never guessed
    (
        "'is' between a value that crossed as a copy and the test's own list",
        {"test_list": ["xs = [3, 1, 2]\nassert sort_copy(xs) is not xs"]},
        SORT_SAME,
        "copies",
    ),
    (
        "truth of an object whose class defines __len__",
        {"test_list": ["assert not empty()"]},
        STACK,
        "__len__",
    ),
    (
        "isinstance of a solution object",
        {"test_list": ["root = TreeNode(1)\nassert isinstance(mirror_tree(root), TreeNode)"]},
        MIRROR_NEW,
        "isinstance()",
    ),
    (
        "type() of a solution object",
        {"test_list": ["root = TreeNode(1)\nassert type(mirror_tree(root)) is type(root)"]},
        MIRROR_NEW,
        "type()",
    ),
    (
        "a chained comparison with 'is'",
        {"test_list": ["a = make()\nassert a is make() is a"]},
        ONE,
        "chained comparison",
    ),
    (
        "a dict keyed by objects whose class defines __hash__",
        {"test_list": ["assert {double(Vec(1)): 1}"]},
        VEC.replace("__hash__ = None", "def __hash__(self):\n        return self.x"),
        "__hash__",
    ),
]

STRICT = [
    # (construct, asserts, expected): the type-strict rule, stricter than one process by design: an object of the
    # solution's is never one of the test's plain values, whatever its own __eq__ says
    ("always-equal object, simple assert", ["assert f(1) == 1"], 0.0),
    ("always-equal object, program", ["x = f(1)\nassert x == 1"], 0.0),
    ("always-equal object in a list", ["assert [f(1)] == [1]"], 0.0),
    ("always-equal object, != a plain value", ["x = f(1)\nassert x != 1"], 1.0),
]

ONE_PROCESS = """
import contextlib, io, json, sys
cases = json.loads(sys.stdin.read())
scores = {}
for case, (solution, asserts) in cases.items():
    scope = {"__name__": "__main__"}
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(solution, "solution.py", "exec"), scope)
            for test in asserts:
                exec(compile(test, "<test>", "exec"), scope)
        scores[case] = 1.0
    except BaseException:
        scores[case] = 0.0
print(json.dumps(scores))
"""


def one_process_scores(cases: dict[str, tuple[str, list[str]]]) -> dict[str, float]:
    """MBPP's own way: the solution and its asserts in one namespace of one process (1.0 when every assert held)."""
    run = subprocess.run(
        [sys.executable, "-c", ONE_PROCESS], input=json.dumps(cases), capture_output=True, text=True, timeout=60
    )
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def reward():
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")
    instance = get_reward("code_tests", concurrency=4, timeout_s=20)
    yield instance
    instance.close()


def test_kodcode_identity_scores_as_real_pytest_does(reward, tmp_path):
    table = {
        f"c{i}s{j}": (row[0], row[1], solution) for i, row in enumerate(KODCODE) for j, solution in enumerate(row[2])
    }
    real = pytest_scores({case: (test, solution) for case, (_, test, solution) in table.items()}, tmp_path)
    ids = list(table)
    results = reward.score_batch([f"```python\n{table[c][2]}\n```" for c in ids], [{"test": table[c][1]} for c in ids])
    differ = [(c, table[c][0], real[c], r.score, r.reason[:160]) for c, r in zip(ids, results, strict=True)]
    differ = [d for d in differ if d[3] != d[2]]
    assert differ == [], "\n".join(map(str, differ))
    assert {real[f"c{i}s0"] for i in range(len(KODCODE))} == {1.0}, "each construct's right solution passes"
    assert all(real[f"c{i}s1"] < 1.0 for i in range(len(KODCODE))), "each wrong solution fails"


def test_program_identity_scores_as_one_process_does(reward):
    table = {f"p{i}s{j}": (row[1], solution) for i, row in enumerate(PROGRAMS) for j, solution in enumerate(row[2])}
    real = one_process_scores({case: (solution, tests) for case, (tests, solution) in table.items()})
    ids = list(table)
    results = reward.score_batch(
        [f"```python\n{table[c][1]}\n```" for c in ids], [{"test_list": table[c][0]} for c in ids]
    )
    differ = [(c, real[c], r.score, r.reason[:160]) for c, r in zip(ids, results, strict=True) if r.score != real[c]]
    assert differ == [], "\n".join(map(str, differ))
    assert {real[f"p{i}s0"] for i in range(len(PROGRAMS))} == {1.0}, "each construct's right solution passes"
    assert {real[f"p{i}s1"] for i in range(len(PROGRAMS))} == {0.0}, "each wrong solution fails"


def test_identity_the_trusted_process_cannot_know_is_refused_by_name(reward):
    results = reward.score_batch([f"```python\n{row[2]}\n```" for row in REFUSED], [row[1] for row in REFUSED])
    wrong = [
        (row[0], r.score, r.reason[:200])
        for row, r in zip(REFUSED, results, strict=True)
        if r.score is not None or row[3] not in r.reason
    ]
    assert wrong == []


def test_an_object_of_the_solutions_is_never_a_plain_value(reward):
    results = reward.score_batch([f"```python\n{ALWAYS_EQ}\n```"] * len(STRICT), [{"test_list": r[1]} for r in STRICT])
    wrong = [(row[0], r.score, r.reason[:160]) for row, r in zip(STRICT, results, strict=True) if r.score != row[2]]
    assert wrong == []
