"""code_tests verdict tables: correct, partially correct and wrong solutions in every format and language."""

from __future__ import annotations

import json
import pickle
import shutil

import pytest

from rewardsmith import ConfigError, get_reward, list_rewards
from rewardsmith.rewards.code.case_formats import AssertTest, BadTestsFormat, parse_tests
from rewardsmith.rewards.code.extract import extract_code
from rewardsmith.rewards.code.plans import ProgramPlan, plan_assert
from rewardsmith.rewards.code.stdout_match import output_lines
from rewardsmith.rewards.code.values import PlainValueError, decode_plain, strict_equal
from rewardsmith.sandboxes.local.backend import LocalSandbox


@pytest.fixture(scope="module")
def reward():
    if LocalSandbox().tier != "bwrap":
        pytest.skip("bwrap tier unavailable here")
    instance = get_reward("code_tests", concurrency=4)
    yield instance
    instance.close()


def block(code: str, lang: str = "python") -> str:
    return f"Here is my solution.\n```{lang}\n{code}\n```\n"


# ---------------------------------------------------------------------------------------------- tables
ADD_CALLS = {
    "language": "python",
    "fn_name": "add",
    "calls": [
        {"args": [1, 2], "expected": 3},
        {"args": [10, 5], "expected": 15},
        {"args": [-4, 4], "expected": 0},
        {"args": [0, 0], "expected": 0},
    ],
}
ADD_ASSERTS = {
    "language": "python",
    "asserts": [
        "assert add(1, 2) == 3",
        "assert add(10, 5) == 15",
        "assert 0 == add(-4, 4)",
        "assert abs(add(0.5, 0.25) - 0.75) < 1e-9",
    ],
}
SUM_STDIO = {
    "stdio": [
        {"input": "1 2\n", "output": "3\n"},
        {"input": "10 5\n", "output": "15"},
        {"input": "-4 4\n", "output": "0\n"},
        {"input": "7 7\n", "output": "14\n"},
    ]
}
OPEN_R1 = {
    "language": "python",
    "test_cases": [
        {"input": "1 2\n", "output": "3\n", "type": "stdin_stdout"},
        {"input": "2 2\n", "output": "4\n", "type": "stdin_stdout"},
    ],
}
APPS_STDIO = json.dumps({"inputs": ["1 2\n", "2 2\n"], "outputs": ["3\n", "4\n"]})
APPS_CALLS = json.dumps({"fn_name": "add", "inputs": [[1, 2], [2, 2]], "outputs": [[3], [4]]})

HUMANEVAL = {
    "test": "METADATA = {}\n\ndef check(candidate):\n"
    "    assert candidate(1, 2) == 3\n    for i in range(4):\n        assert candidate(i, i) == 2 * i\n"
    "    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-9\n",
    "entry_point": "add",
}
HUMANEVAL_RAISES = {
    "check": "def check(candidate):\n    try:\n        candidate('x', 1)\n    except TypeError:\n        pass\n"
    "    else:\n        assert False, 'expected TypeError'\n    assert candidate(2, 2) == 4\n",
    "entry_point": "add",
}
MBPP = {
    "test_list": ["assert add(x, 1) == 6", "assert math.isclose(add(x, 0.5), 5.5)"],
    "test_setup_code": "x = 5",
    "test_imports": ["import math"],
}
COMPREHENSIONS = {
    "asserts": [
        "assert all(add(i, 1) == i + 1 for i in range(3))",
        "assert [add(a, b) for a, b in [(1, 2), (3, 4)]] == [3, 7]",
        "assert list(map(add, [1, 2], [3, 4])) == [4, 6]",
        "assert (lambda r: r == 3)(add(1, 2))",
        "assert (s := add(2, 3)) == 5 and s > 0",
        "assert add(1, 1) == 2\nassert add(7, 1) == 8",
    ]
}
HUMANEVAL_HELPER = {  # HumanEval/32 shape: the check calls a helper defined in the prompt
    "prompt": "import math\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n"
    'def find_zero(xs):\n    """A zero of poly(xs, .)."""\n',
    "test": "def check(candidate):\n    for xs in ([-6, 11, -6, 1], [1, 2], [-2, 1]):\n"
    "        assert math.fabs(poly(xs, candidate(xs))) < 1e-4\n",
    "entry_point": "find_zero",
}
PY_FIND_ZERO = (
    "import math\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n"
    "def find_zero(xs):\n    lo, hi = -100.0, 100.0\n    for _ in range(200):\n        mid = (lo + hi) / 2\n"
    "        if (poly(xs, lo) > 0) == (poly(xs, mid) > 0):\n            lo = mid\n        else:\n            hi = mid\n"
    "    return lo"
)
SOLUTION_OBJECT = {"asserts": ["s = Solution()\nassert s.twice(2) == 4", "s = Solution()\nassert s.twice(5) == 10"]}
PY_TWICE = "class Solution:\n    def twice(self, x):\n        return 2 * x"
PY_ADD = "def add(a, b):\n    return a + b"
PY_ADD_PARTIAL = "def add(a, b):\n    return a + b if a < 5 else a"
PY_ADD_WRONG = "def add(a, b):\n    return a - b"
PY_SUM = "a, b = map(int, input().split())\nprint(a + b)"
PY_SUM_PARTIAL = "a, b = map(int, input().split())\nprint(a + b if a > 0 else 99)"
PY_SUM_WRONG = "a, b = map(int, input().split())\nprint(a * b)"
CPP_SUM = '#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<"\\n";}'
CPP_SUM_PARTIAL = '#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<(a>0?a+b:99)<<"\\n";}'
CPP_SUM_WRONG = '#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a*b<<"\\n";}'
JS_SUM = "const [a,b]=require('fs').readFileSync(0,'utf8').trim().split(/\\s+/).map(Number);console.log(a+b);"
JS_SUM_PARTIAL = (
    "const [a,b]=require('fs').readFileSync(0,'utf8').trim().split(/\\s+/).map(Number);console.log(a>0?a+b:99);"
)
JS_SUM_WRONG = "const [a,b]=require('fs').readFileSync(0,'utf8').trim().split(/\\s+/).map(Number);console.log(a*b);"

VERDICTS = [
    # (id, tests, completion, expected score)
    ("calls-correct", ADD_CALLS, block(PY_ADD), 1.0),
    ("calls-partial", ADD_CALLS, block(PY_ADD_PARTIAL), 0.75),
    ("calls-wrong", ADD_CALLS, block(PY_ADD_WRONG), 0.25),  # add(0, 0) == 0 either way
    ("calls-syntax-error", ADD_CALLS, block("def add(a, b) return a"), 0.0),
    ("calls-missing-function", ADD_CALLS, block("def plus(a, b):\n    return a + b"), 0.0),
    ("calls-returns-float", ADD_CALLS, block("def add(a, b):\n    return float(a + b)"), 0.0),
    ("calls-class-solution", ADD_CALLS, block("class Solution:\n    def add(self, a, b):\n        return a + b"), 1.0),
    ("asserts-correct", ADD_ASSERTS, block(PY_ADD), 1.0),
    ("asserts-partial", ADD_ASSERTS, block(PY_ADD_PARTIAL), 0.75),
    ("asserts-wrong", ADD_ASSERTS, block("def add(a, b):\n    return a * b + 2"), 0.0),
    ("stdio-py-correct", SUM_STDIO, block(PY_SUM), 1.0),
    ("stdio-py-partial", SUM_STDIO, block(PY_SUM_PARTIAL), 0.75),
    ("stdio-py-wrong", SUM_STDIO, block(PY_SUM_WRONG), 0.0),
    ("stdio-cpp-correct", {**SUM_STDIO, "language": "cpp"}, block(CPP_SUM, "cpp"), 1.0),
    ("stdio-cpp-partial", {**SUM_STDIO, "language": "cpp"}, block(CPP_SUM_PARTIAL, "cpp"), 0.75),
    ("stdio-cpp-wrong", {**SUM_STDIO, "language": "cpp"}, block(CPP_SUM_WRONG, "cpp"), 0.0),
    ("stdio-cpp-compile-error", {**SUM_STDIO, "language": "cpp"}, block("int main( {", "cpp"), 0.0),
    ("stdio-js-correct", {**SUM_STDIO, "language": "javascript"}, block(JS_SUM, "javascript"), 1.0),
    ("stdio-js-partial", {**SUM_STDIO, "language": "javascript"}, block(JS_SUM_PARTIAL, "js"), 0.75),
    ("stdio-js-wrong", {**SUM_STDIO, "language": "javascript"}, block(JS_SUM_WRONG, "js"), 0.0),
    ("open-r1-correct", OPEN_R1, block(PY_SUM), 1.0),
    ("open-r1-wrong", OPEN_R1, block(PY_SUM_WRONG), 0.5),  # 2*2 == 2+2
    ("apps-stdio-json-string", APPS_STDIO, block(PY_SUM), 1.0),
    ("apps-calls-unwrap", APPS_CALLS, block(PY_ADD), 1.0),
    ("apps-calls-wrong", APPS_CALLS, block(PY_ADD_WRONG), 0.0),
    ("comprehensions-correct", COMPREHENSIONS, block(PY_ADD), 1.0),
    ("comprehensions-partial", COMPREHENSIONS, block(PY_ADD_PARTIAL), 6 / 7),  # add(7, 1) wrong
    ("comprehensions-wrong", COMPREHENSIONS, block("def add(a, b):\n    return a * b + 2"), 0.0),
    ("humaneval-correct", HUMANEVAL, block(PY_ADD), 1.0),
    ("humaneval-wrong", HUMANEVAL, block(PY_ADD_WRONG), 0.0),
    ("humaneval-expects-exception", HUMANEVAL_RAISES, block(PY_ADD), 1.0),
    ("humaneval-missing-exception", HUMANEVAL_RAISES, block("def add(a, b):\n    return 4"), 0.0),
    ("mbpp-setup-correct", MBPP, block(PY_ADD), 1.0),
    ("mbpp-setup-wrong", MBPP, block("def add(a, b):\n    return 6"), 0.5),
    ("humaneval-prompt-helper", HUMANEVAL_HELPER, block(PY_FIND_ZERO), 1.0),
    (
        "humaneval-redefined-helper",
        HUMANEVAL_HELPER,
        block("def poly(xs, x):\n    return 0\ndef find_zero(xs):\n    return 0.0"),
        0.0,
    ),
    ("setup-object-correct", SOLUTION_OBJECT, block(PY_TWICE), 1.0),
    ("setup-object-wrong", SOLUTION_OBJECT, block(PY_TWICE.replace("2 * x", "x + 2")), 0.5),  # 2 + 2 == 2 * 2
    ("no-code-block", ADD_CALLS, "I think the answer is a + b.", 0.0),
    ("wrong-language-block-only", {**SUM_STDIO, "language": "cpp"}, block(PY_SUM, "python"), 0.0),
]


@pytest.mark.parametrize(("tests", "completion", "expected"), [v[1:] for v in VERDICTS], ids=[v[0] for v in VERDICTS])
def test_verdict_table(reward, tests, completion, expected):
    runtime = {"cpp": "g++", "javascript": "node"}.get(tests.get("language", "") if isinstance(tests, dict) else "")
    if runtime and shutil.which(runtime) is None:
        pytest.skip(f"{runtime} is not installed")
    (result,) = reward.details([completion], tests=[tests])
    assert result.score == pytest.approx(expected), result.reason


def test_batch_mixes_formats_and_conversational_completions(reward):
    completions = [[{"role": "assistant", "content": block(PY_ADD)}], block(PY_SUM_WRONG), block(PY_SUM)]
    scores = reward(completions, tests=[ADD_CALLS, SUM_STDIO, json.dumps(SUM_STDIO)])
    assert scores == [1.0, 0.0, 1.0]


def test_all_or_nothing_scoring():
    strict = get_reward("code_tests", scoring="all_or_nothing")
    try:
        assert strict([block(PY_ADD_PARTIAL), block(PY_ADD)], tests=[ADD_CALLS, ADD_CALLS]) == [0.0, 1.0]
    finally:
        strict.close()


def test_timeout_fails_only_that_test(reward):
    code = "import time\ndef add(a, b):\n    if a == 10:\n        time.sleep(60)\n    return a + b"
    fast = get_reward("code_tests", timeout_s=2.0)
    try:
        (result,) = fast.details([block(code)], tests=[ADD_CALLS])
    finally:
        fast.close()
    assert result.score == pytest.approx(0.75)
    assert "timeout" in result.reason


IN_PLACE = {"check": "def check(candidate):\n    xs = [3, 1, 2]\n    candidate(xs)\n    assert xs == [1, 2, 3]\n"}
UNTRUSTED = [
    # (tests, completion, score with untrusted_asserts="run")
    ({**IN_PLACE, "entry_point": "sort_in_place"}, block("def sort_in_place(xs):\n    xs.sort()"), 1.0),
    ({**IN_PLACE, "entry_point": "sort_in_place"}, block("def sort_in_place(xs):\n    xs.reverse()"), 0.0),
    ({"asserts": ["assert eval('add(1, 2)') == 3"]}, block(PY_ADD), 1.0),
]


@pytest.mark.parametrize(("tests", "completion", "run_score"), UNTRUSTED)
def test_untrusted_tests_are_unscorable_by_default_and_marked_when_run(reward, tests, completion, run_score):
    """Tests decidable only inside the solution's process could be forged by it: None unless asked to run them."""
    (default,) = reward.details([completion], tests=[tests])
    assert default.score is None and "trusted: false" in default.reason and default.trusted is False
    runner = get_reward("code_tests", untrusted_asserts="run")
    try:
        (ran,) = runner.details([completion], tests=[tests])
    finally:
        runner.close()
    assert ran.score == run_score, ran.reason
    assert "trusted: false" in ran.reason and ran.trusted is False


def test_trusted_results_carry_no_untrusted_mark(reward):
    (result,) = reward.details([block(PY_ADD)], tests=[COMPREHENSIONS])
    assert result.score == 1.0 and "trusted" not in result.reason and "trusted" not in result.model_extra


def test_stdout_whitespace_rules():
    assert output_lines("3  \r\n4\n\n\n") == ["3", "4"]
    assert output_lines(" 3\n\n4") == [" 3", "", "4"], "leading spaces and inner blank lines count"


def test_unscorable_samples_get_none_not_zero(reward):
    broken = [None, "{not json", {"language": "cobol", "stdio": []}, {"asserts": ["return 1\nassert add(1, 2) == 3"]}]
    results = reward.details([block(PY_ADD)] * len(broken), tests=broken)
    assert [r.score for r in results] == [None] * len(broken), [r.reason for r in results]


def test_sandbox_failure_is_none_not_zero(monkeypatch):
    """A real infrastructure failure: the strict bwrap tier with bubblewrap missing fails every run."""
    import rewardsmith.sandboxes.local.backend as local

    monkeypatch.setattr(local, "find_bwrap", lambda: None)
    broken = get_reward("code_tests", backend_options={"tier": "bwrap"})
    try:
        (result,) = broken.details([block(PY_ADD)], tests=[ADD_CALLS])
    finally:
        broken.close()
    assert result.score is None
    assert "sandbox" in result.reason


def test_remote_backend_needs_a_url_and_bad_config_raises_at_construction():
    with pytest.raises(ConfigError, match="base_url"):
        get_reward("code_tests", backend="remote")
    with pytest.raises(ConfigError):
        get_reward("code_tests", scoring="sometimes")
    with pytest.raises(ConfigError):
        get_reward("code_tests", language="cobol")
    with pytest.raises(ConfigError):
        get_reward("code_tests", untrusted_asserts="always")


def test_registered_and_picklable(reward):
    assert "code_tests" in list_rewards()
    reward([block(PY_ADD)], tests=[ADD_CALLS])  # backend is live now
    clone = pickle.loads(pickle.dumps(reward))
    try:
        assert clone([block(PY_ADD)], tests=[ADD_CALLS]) == [1.0]
    finally:
        clone.close()


def test_custom_tests_column(reward):
    custom = get_reward("code_tests", tests_column="verification_info")
    try:
        assert custom([block(PY_SUM)], verification_info=[OPEN_R1]) == [1.0]
    finally:
        custom.close()


# ---------------------------------------------------------------------------------------------- pure parts
@pytest.mark.parametrize(
    ("value", "kind", "n"),
    [
        (ADD_CALLS, "calls", 4),
        (ADD_ASSERTS, "asserts", 4),
        (SUM_STDIO, "stdio", 4),
        (OPEN_R1, "stdio", 2),
        (APPS_STDIO, "stdio", 2),
        (APPS_CALLS, "calls", 2),
        ({"fn_name": "f", "inputs": ["1\n2", "[3]"], "outputs": ["3", "[3]"]}, "calls", 2),  # LiveCodeBench
        ({"inputs": [["1", "2"]], "outputs": [["3"]]}, "stdio", 1),  # APPS lists of lines
        ({"asserts": ["assert f(1) == 2\nassert f(2) == 3", "assert f(3) == 4"]}, "asserts", 3),  # split per assert
        ({"asserts": ["x = 1\nassert f(x) == 2\nassert f(x + 1) == 3"]}, "asserts", 1),  # setup: one program
        (HUMANEVAL, "asserts", 1),
        ({"check": HUMANEVAL["test"], "fn_name": "add"}, "asserts", 1),
        (MBPP, "asserts", 2),
        ({"test_list": ["assert add(1, 2) == 3"], "test_setup_code": "", "test_imports": []}, "asserts", 1),
    ],
)
def test_formats_parse(value, kind, n):
    suite = parse_tests(value)
    assert (suite.kind, len(suite)) == (kind, n)


@pytest.mark.parametrize(
    "value",
    [
        "[1, 2]",
        {"language": "cpp", "asserts": ["assert f() == 1"]},
        {"asserts": ["x = 1"]},
        {"stdio": []},
        {"fn_name": "1bad", "calls": [{"args": [], "expected": 1}]},
        {"inputs": [1], "outputs": []},
        {"foo": 1},
        {"asserts": ["assert f(1) == 2\nprint("]},
        {"test": "assert add(1, 2) == 3", "entry_point": "add"},  # no check function
        {"test": HUMANEVAL["test"], "entry_point": "not valid"},
        {"test_list": ["assert add(1, 2) == 3"], "test_imports": "import math"},
    ],
)
def test_bad_formats_raise(value):
    with pytest.raises(BadTestsFormat):
        parse_tests(value)


@pytest.mark.parametrize(
    ("source", "exprs", "literal"),
    [
        ("assert f(1) == 2", ("f(1)",), (True, 2)),
        ("assert (1, 2) == f(x=3)", ("f(x=3)",), (True, (1, 2))),
        ("assert abs(f(0.5) - 2.5) < 1e-6", ("f(0.5)",), (False, None)),
        ("assert sorted(f([3, 1])) == [1, 3]", ("f([3, 1])",), (False, None)),
        ("assert math.isclose(f(2), math.pi)", ("f(2)",), (False, None)),
        ("assert Solution().f(1) == 1", ("Solution().f(1)",), (True, 1)),
        ("assert f(g(1)) == 3", ("f(g(1))",), (True, 3)),
    ],
)
def test_asserts_split_solution_parts_from_checking_glue(source, exprs, literal):
    plan = plan_assert(AssertTest(source))
    assert plan.exprs == exprs
    assert plan.literal == literal


@pytest.mark.parametrize(
    ("source", "replay", "untrusted"),
    [
        (
            "assert all(f(i) == i + 1 for i in range(3))",
            "assert all((__rk_replay('0', (i,)) == i + 1 for i in range(3)))",
            None,
        ),
        ("assert list(map(f, [1, 2])) == [2, 3]", "assert list(map(__rk_replay('0', ()), [1, 2])) == [2, 3]", None),
        ("assert f(g(1)) == CONST", "assert __rk_replay('0', (__rk_replay('1', (1,)),)) == __rk_replay('2', ())", None),
        ("assert (r := f(2)) and r > 1", "assert (r := __rk_replay('0', (2,))) and r > 1", None),
        ("assert S().g(x=n)[1:k]", "assert __rk_replay('0', (__rk_replay('1', ()), 1, __rk_replay('2', ())))", None),
        ("assert eval('f(1)') == 2", "assert eval('f(1)') == 2", "reaches names dynamically (eval)"),
    ],
)
def test_programs_replace_each_solution_expression_by_a_keyed_lookup(source, replay, untrusted):
    """The trusted replay sees only glue + lookups keyed by inputs it computed itself; the solution's process
    gets only each site's chain (names and attribute names, never a constant of the test)."""
    plan = plan_assert(AssertTest(source))
    assert isinstance(plan, ProgramPlan)
    assert plan.replay == replay
    assert plan.untrusted == untrusted
    if untrusted is None:
        for _, chain in plan.chains:
            assert chain.startswith("lambda __rk_a: ")
            body = chain.removeprefix("lambda __rk_a: ")
            for index in range(10):
                body = body.replace(f"__rk_a[{index}]", "")
            assert not any(ch.isdigit() or ch in "'\"" for ch in body), chain


def test_probe_makes_asserts_non_fatal_and_keeps_the_test_out_of_the_chains():
    plan = plan_assert(AssertTest("assert [add(a, b) for a, b in [(1, 2)]] == [3]"))
    assert plan.probe.startswith("with __rk_assuming:")
    assert plan.chains == (("0", "lambda __rk_a: add(__rk_a[0], __rk_a[1])"),)


@pytest.mark.parametrize(
    ("program", "why"),
    [
        (
            "def check(candidate):\n    xs = [3, 1]\n    candidate(xs)\n    assert xs == [1, 3]\ncheck(f)",
            "side effects",
        ),
        ("def check(candidate):\n    assert getattr(candidate, '__name__') == 'f'\ncheck(f)", "dynamically"),
        ("class T(Solution):\n    pass\nassert T().f(1) == 2", "subclasses"),
        ("f.cache = {}\nassert f(1) == 2", "assigns to the solution"),
        (
            "def check(candidate):\n    try:\n        candidate(-1)\n    except ValueError:\n        pass\ncheck(f)",
            None,
        ),
    ],
)
def test_programs_decidable_only_next_to_the_solution_are_flagged(program, why):
    plan = plan_assert(AssertTest(program, program=True))
    assert (plan.untrusted is None) if why is None else (why in plan.untrusted)


@pytest.mark.parametrize(
    ("actual", "expected", "equal"),
    [
        (3, 3, True),
        (True, 1, False),
        (1, 1.0, False),
        (0.1 + 0.2, 0.3, True),
        ([1, (2,)], [1, (2,)], True),
        ([1, [2]], [1, (2,)], False),
        ({"a": 1}, {"a": 1}, True),
        ({"a": 1}, {"a": True}, False),
        (float("nan"), float("nan"), True),
        ({1, 2}, {2, 1}, True),
        (None, 0, False),
        ("3", 3, False),
    ],
)
def test_strict_equality_table(actual, expected, equal):
    assert strict_equal(actual, expected) is equal


@pytest.mark.parametrize(
    "reported",
    [{"$weird": 1}, {"a": 1}, {"$dict": [[1]]}, {"$set": [[1]]}, {"$float": "1e999"}],
)
def test_decoder_refuses_anything_but_harness_values(reported):
    with pytest.raises(PlainValueError):
        decode_plain(reported)


@pytest.mark.parametrize(
    "answers",
    [
        [],
        {"q#0": {"value": {"$weird": 1}}},
        {"q#0": {"raise": "Value Error"}},
        {"q#0": {"object": 1}},
        {"q#0": {"object": True}},
        {"q#0": {"object": ["q#0", 8]}},
        {"q#0": {"object": [1, 7]}},
        {"q#0": {"raise": ["ValueError", "Key Error"]}},
        {"q#0": {"value": 1, "object": True}},
        {"q#0": {"verdict": True}},
        {"q#0": {"value": 1}, "other#0": {"value": 2}},
        {},
    ],
)
def test_answers_are_validated_before_the_trusted_replay(answers):
    from rewardsmith.rewards.code.records import decode_answers

    with pytest.raises(PlainValueError):
        decode_answers(answers, {"q#0"})
    good = {"a#0": {"value": {"$tuple": [1]}}, "b#0": {"raise": "ValueError"}, "c#0": {"object": ["c#0", 7]}}
    good["d#0"] = {"raise": ["ValueError", "KeyError"]}
    assert decode_answers(good, set(good)) is good


@pytest.mark.parametrize(
    ("text", "language", "which", "expected"),
    [
        ("```python\na\n```\n```python\nb\n```", "python", "last", "b\n"),
        ("```python\na\n```\n```python\nb\n```", "python", "first", "a\n"),
        ("```cpp\nc\n```\n```python\np\n```", "cpp", "last", "c\n"),
        ("```\nu\n```", "python", "last", "u\n"),
        ("```py\nunclosed", "python", "last", "unclosed"),
        ("no fences", "python", "last", None),
        ("```js\nx\n```", "javascript", "last", "x\n"),
        ("raw code", "python", "raw", "raw code"),
    ],
)
def test_extraction_table(text, language, which, expected):
    assert extract_code(text, language, which) == expected
