"""Every language x backend through the ``code_tests`` reward itself: a right program scores 1.0, a wrong one 0.0.

The sandbox tests call each backend directly; this table goes through extraction, compilation (C++ is compiled
in one run and its binary handed to the next), the harness and the verdict, where a backend difference that a
direct call cannot see shows up (a compiled binary that arrives without its executable bit scored 0.0 on Docker).
"""

from __future__ import annotations

import pytest

from rewardsmith import get_reward
from rewardsmith.sandboxes.local.backend import LocalSandbox
from tests.support.docker_engine import docker_skip_reason
from tests.support.sandbox_server import sandbox_server

SUM = [{"input": "1 2\n", "output": "3\n"}, {"input": "10 -4\n", "output": "6\n"}]
CPP_IOSTREAM = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }"
CPP_CSTDIO = '#include <cstdio>\nint main() { long a, b; scanf("%ld %ld", &a, &b); printf("%ld\\n", a + b); }'
CPP_WRONG = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a - b << '\\n'; }"
CPP_BROKEN = "#include <iostream>\nint main() { this does not compile }"
JS_RIGHT = "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);"
JS_WRONG = "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a * b);"
JAVA = (
    "import java.util.*;\npublic class Main {{\n  public static void main(String[] args) {{\n"
    "    Scanner in = new Scanner(System.in);\n    long a = in.nextLong(), b = in.nextLong();\n"
    "    System.out.println(a {op} b);\n  }}\n}}"
)
GO = 'package main\nimport "fmt"\nfunc main() { var a, b int64; fmt.Scan(&a, &b); fmt.Println(a OP b) }'
RUST = (
    "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap();\n"
    '  let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect(); println!("{}", v[0] OP v[1]); }'
)
JAVA_READ = (
    "import java.nio.file.*;\npublic class Main { public static void main(String[] a) throws Exception {\n"
    '  for (String p : new String[]{"answer.txt", "expected", "/work/output"}) {\n'
    "    try { System.out.print(Files.readString(Path.of(p))); } catch (Exception e) {} } } }"
)
GO_BOMB = 'package main\nimport ("os"; "os/exec")\nfunc main() { for { c := exec.Command(os.Args[0]); c.Start() } }'
RUST_READ = (
    'fn main() { for p in ["answer.txt", "expected", "../answer"] {\n'
    '  if let Ok(s) = std::fs::read_to_string(p) { print!("{}", s); } } }'
)
PY_STDIO = "a, b = map(int, input().split())\nprint(a + b)"
PY_ADD = "def add(a, b):\n    return a + b"
PY_SUB = "def add(a, b):\n    return a - b"
CALLS = {"fn_name": "add", "calls": [{"args": [1, 2], "expected": 3}, {"args": [5, 5], "expected": 10}]}
ASSERTS = {"asserts": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]}
HUMANEVAL = {
    "test": "def check(candidate):\n    import random\n    for _ in range(20):\n"
    "        x, y = random.randint(0, 99), random.randint(0, 99)\n        assert candidate(x, y) == x + y\n",
    "entry_point": "add",
}


def stdio(language: str) -> dict:
    return {"language": language, "stdio": SUM}


#: (case id, language tag of the fence, program, tests, expected score)
TABLE = [
    ("python-stdio-right", "python", PY_STDIO, stdio("python"), 1.0),
    ("python-stdio-wrong", "python", "print(0)", stdio("python"), 0.0),
    ("python-calls-right", "python", PY_ADD, CALLS, 1.0),
    ("python-calls-wrong", "python", PY_SUB, CALLS, 0.0),
    ("python-asserts-right", "python", PY_ADD, ASSERTS, 1.0),
    ("python-asserts-wrong", "python", PY_SUB, ASSERTS, 0.0),
    ("python-random-check-right", "python", PY_ADD, HUMANEVAL, 1.0),
    ("python-random-check-wrong", "python", PY_SUB, HUMANEVAL, 0.0),
    ("cpp-iostream-right", "cpp", CPP_IOSTREAM, stdio("cpp"), 1.0),
    ("cpp-cstdio-right", "cpp", CPP_CSTDIO, stdio("cpp"), 1.0),
    ("cpp-wrong", "cpp", CPP_WRONG, stdio("cpp"), 0.0),
    ("cpp-compile-error", "cpp", CPP_BROKEN, stdio("cpp"), 0.0),
    ("javascript-right", "javascript", JS_RIGHT, stdio("javascript"), 1.0),
    ("javascript-wrong", "javascript", JS_WRONG, stdio("javascript"), 0.0),
    ("java-right", "java", JAVA.format(op="+"), stdio("java"), 1.0),
    ("java-other-class-name", "java", JAVA.format(op="+").replace("Main", "Solution"), stdio("java"), 1.0),
    ("java-wrong", "java", JAVA.format(op="-"), stdio("java"), 0.0),
    ("java-compile-error", "java", "public class Main { void f( }", stdio("java"), 0.0),
    ("go-right", "go", GO.replace("OP", "+"), stdio("go"), 1.0),
    ("go-wrong", "go", GO.replace("OP", "*"), stdio("go"), 0.0),
    ("go-compile-error", "go", "package main\nfunc main() { x := }", stdio("go"), 0.0),
    ("rust-right", "rust", RUST.replace("OP", "+"), stdio("rust"), 1.0),
    ("rust-wrong", "rust", RUST.replace("OP", "-"), stdio("rust"), 0.0),
    ("rust-compile-error", "rust", 'fn main() { let x: i32 = "no"; }', stdio("rust"), 0.0),
]
#: hostile programs in the compiled languages: none may score (each would need the answer it cannot see)
HACKS = [
    ("java-exit-early", "java", "public class Main { public static void main(String[] a) { System.exit(0); } }"),
    ("java-spin", "java", "public class Main { public static void main(String[] a) { while (true) {} } }"),
    ("java-read-answers", "java", JAVA_READ),
    ("go-exit-early", "go", 'package main\nimport "os"\nfunc main() { os.Exit(0) }'),
    ("go-fork-bomb", "go", GO_BOMB),
    ("rust-exit-early", "rust", "fn main() { std::process::exit(0); }"),
    ("rust-spin", "rust", "fn main() { loop {} }"),
    ("rust-read-answers", "rust", RUST_READ),
    ("cpp-exit-early", "cpp", "#include <cstdlib>\nint main() { std::exit(0); }"),
]


#: per-test limit: a JVM or node start inside a container on a loaded 2-core machine can take several seconds, and a
#: right program must not time out (the spinning hacks run into it, which is what they are for)
TIMEOUT_S = 8


def _local() -> dict:
    if LocalSandbox().tier not in ("bwrap", "bwrap-exec"):
        pytest.skip("no bubblewrap tier here (apt-get install bubblewrap)")
    return {"backend": "local"}


def _docker() -> dict:
    reason = docker_skip_reason()
    if reason:
        pytest.skip(reason)
    return {"backend": "docker"}


@pytest.fixture(scope="module", params=["local", "docker", "remote"])
def reward(request):
    if request.param == "remote":
        _local()
        with sandbox_server(max_run_timeout=60) as url:
            instance = get_reward("code_tests", backend="remote", base_url=url, concurrency=4, timeout_s=TIMEOUT_S)
            yield instance
            instance.close()
        return
    options = _local() if request.param == "local" else _docker()
    instance = get_reward("code_tests", concurrency=4, timeout_s=TIMEOUT_S, **options)
    yield instance
    instance.close()


def test_every_language_right_scores_one_and_wrong_zero(reward):
    completions = [f"Solution:\n```{tag}\n{program}\n```\n" for _, tag, program, _, _ in TABLE]
    results = reward.score_batch(completions, [{"tests": tests} for *_, tests, _ in TABLE])
    got = {case: result for (case, *_), result in zip(TABLE, results, strict=True)}
    wrong = {
        case: (got[case].score, got[case].reason) for case, _, *_, expected in TABLE if got[case].score != expected
    }
    assert not wrong, f"{reward.config.backend}: {wrong}"


def test_hostile_compiled_programs_never_score(reward):
    tests = [{"tests": stdio(tag)} for _, tag, _ in HACKS]
    results = reward.score_batch([f"```{tag}\n{code}\n```" for _, tag, code in HACKS], tests)
    scored = {case: (r.score, r.reason) for (case, *_), r in zip(HACKS, results, strict=True) if r.score}
    assert not scored
    unscorable = [case for (case, tag, _), r in zip(HACKS, results, strict=True) if r.score is None]
    assert not unscorable
