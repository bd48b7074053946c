"""Procedural audit sets whose gold a rewardsmith verifier decides (seeded, offline, no copied text).

Every generator returns balanced items: the gold response sits in slot a for half of them and is the
longer response for half of them, independently, so position and length preferences cannot pass for
accuracy. Each item carries a :class:`GoldCheck` naming the verifier (``math_equivalence``,
``code_tests``, ``json_schema``, ``regex_match``, ``think_format``) and the columns it needs.

>>> items = generate_set("math", n=4, seed=0)
>>> sorted(it.gold for it in items)
['a', 'a', 'b', 'b']
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from rewardsmith.heldout.sets import AuditItem, GoldCheck, item_id

SET_KINDS = ("math", "code", "format", "mixed")


@dataclass(frozen=True)
class Draft:
    """One generated comparison before slot assignment: prompt, a right and a wrong response, both styles."""

    prompt: str
    right_terse: str
    right_long: str
    wrong_terse: str
    wrong_long: str
    check: GoldCheck
    family: str


def generate_set(kind: str, n: int, seed: int = 0) -> list[AuditItem]:
    """``n`` items of ``kind`` (math, code, format or mixed), reproducible from ``seed``."""
    if kind not in SET_KINDS:
        raise ValueError(f"unknown set kind {kind!r}; choose one of {', '.join(SET_KINDS)} or a .jsonl file")
    if n < 1:
        raise ValueError("n must be at least 1")
    rng = random.Random(f"rewardsmith-audit/{kind}/{seed}")
    kinds = ["math", "code", "format"] if kind == "mixed" else [kind]
    gold_slots = _balanced(n, rng)
    gold_longer = _balanced(n, rng)
    items: list[AuditItem] = []
    seen: set[str] = set()
    attempts = 0
    while len(items) < n:
        attempts += 1
        if attempts > 50 * n:
            raise ValueError(f"could not generate {n} distinct {kind} items; ask for fewer")
        i = len(items)
        category = kinds[i % len(kinds)]
        draft = _MAKERS[category](rng)
        if draft.prompt in seen:
            continue
        seen.add(draft.prompt)
        items.append(_place(draft, category, gold_slots[i], gold_longer[i]))
    return items


def _balanced(n: int, rng: random.Random) -> list[bool]:
    flags = [i % 2 == 0 for i in range(n)]
    rng.shuffle(flags)
    return flags


def _place(draft: Draft, category: str, gold_in_a: bool, gold_is_longer: bool) -> AuditItem:
    right = draft.right_long if gold_is_longer else draft.right_terse
    wrong = draft.wrong_terse if gold_is_longer else draft.wrong_long
    a, b = (right, wrong) if gold_in_a else (wrong, right)
    return AuditItem(
        id=item_id(category, draft.prompt, a, b),
        prompt=draft.prompt,
        response_a=a,
        response_b=b,
        gold="a" if gold_in_a else "b",
        category=category,
        check=draft.check,
        metadata={"family": draft.family, "gold_longer": gold_is_longer},
    )


# -- math: a correct and a wrong worked answer ---------------------------------------------------------

_NAMES = ["Maya", "Tomas", "Ines", "Kofi", "Lena", "Ravi", "Noor", "Aiko", "Pavel", "Zara", "Emeka", "Sofia"]
_ITEMS = ["pencils", "notebooks", "apples", "tickets", "stickers", "candles", "marbles", "postcards"]


def _boxed(value: Any) -> str:
    return f"\\boxed{{{value}}}"


def _math_draft(
    prompt: str, steps_right: list[str], steps_wrong: list[str], right: Any, wrong: Any, family: str
) -> Draft:
    def terse(steps: list[str], value: Any) -> str:
        return f"{steps[-1]} The answer is {_boxed(value)}."

    def long(steps: list[str], value: Any) -> str:
        body = "\n".join(f"Step {k}: {s}" for k, s in enumerate(steps, 1))
        return (
            "Let's work through this carefully, one step at a time, writing down every quantity.\n"
            f"{body}\n"
            f"Each step follows from the previous one, so the final result is {value}.\n"
            f"The answer is {_boxed(value)}."
        )

    return Draft(
        prompt=prompt,
        right_terse=terse(steps_right, right),
        right_long=long(steps_right, right),
        wrong_terse=terse(steps_wrong, wrong),
        wrong_long=long(steps_wrong, wrong),
        check=GoldCheck(reward="math_equivalence", columns={"solution": f"${right}$"}),
        family=family,
    )


def _math_change(rng: random.Random) -> Draft:
    name, thing = rng.choice(_NAMES), rng.choice(_ITEMS)
    price, count = rng.randint(2, 9), rng.randint(3, 12)
    paid = (price * count // 10 + 1 + rng.randint(0, 3)) * 10
    right, wrong = paid - price * count, paid - price * (count - 1)
    prompt = f"{name} buys {count} {thing} at ${price} each and pays with ${paid}. How many dollars of change?"
    return _math_draft(
        prompt,
        [
            f"The {thing} cost {count} x {price} = {price * count} dollars.",
            f"Change is {paid} - {price * count} = {right}.",
        ],
        [
            f"The {thing} cost {count - 1} x {price} = {price * (count - 1)} dollars.",
            f"Change is {paid} - {price * (count - 1)} = {wrong}.",
        ],
        right,
        wrong,
        "change",
    )


def _math_linear(rng: random.Random) -> Draft:
    x = rng.randint(-9, 12)
    a = rng.choice([2, 3, 4, 5, 6, 7])
    b = rng.choice([v for v in range(-15, 16) if v != 0])
    c = a * x + b
    wrong = Fraction(c + b, a)  # the sign slip: moving +b across without negating it
    wrong_text = (
        str(wrong.numerator) if wrong.denominator == 1 else f"\\frac{{{wrong.numerator}}}{{{wrong.denominator}}}"
    )
    sign = "+" if b > 0 else "-"
    prompt = f"Solve for x: {a}x {sign} {abs(b)} = {c}."
    return _math_draft(
        prompt,
        [f"Move the constant: {a}x = {c} - ({b}) = {c - b}.", f"Divide by {a}: x = {c - b} / {a} = {x}."],
        [f"Move the constant: {a}x = {c} + ({b}) = {c + b}.", f"Divide by {a}: x = {c + b} / {a} = {wrong_text}."],
        x,
        wrong_text,
        "linear",
    )


def _math_series(rng: random.Random) -> Draft:
    n = rng.randint(8, 60)
    right, wrong = n * (n + 1) // 2, n * (n - 1) // 2
    prompt = f"What is the sum of all integers from 1 to {n}, inclusive?"
    return _math_draft(
        prompt,
        [f"Use the formula n(n+1)/2 with n = {n}.", f"{n} x {n + 1} / 2 = {right}."],
        [f"Use the formula n(n-1)/2 with n = {n}.", f"{n} x {n - 1} / 2 = {wrong}."],
        right,
        wrong,
        "series",
    )


def _math_percent(rng: random.Random) -> Draft:
    pct = rng.choice([10, 15, 20, 25, 30, 40, 60, 75])
    base = rng.choice([40, 60, 80, 120, 160, 200, 240, 360, 400])
    right = base * pct // 100
    wrong = base - right
    prompt = f"A jacket costs ${base}. It is discounted by {pct}%. How many dollars is the discount?"
    return _math_draft(
        prompt,
        [f"{pct}% of {base} is {base} x {pct} / 100.", f"That is {right} dollars."],
        [f"The discount leaves {100 - pct}% of the price: {base} x {100 - pct} / 100.", f"That is {wrong} dollars."],
        right,
        wrong,
        "percent",
    )


def _math_rectangle(rng: random.Random) -> Draft:
    w, h = rng.randint(3, 15), rng.randint(3, 15)
    right, wrong = 2 * (w + h), w * h
    if right == wrong:
        wrong = w + h
    prompt = f"A rectangle is {w} cm wide and {h} cm tall. What is its perimeter in cm?"
    return _math_draft(
        prompt,
        ["The perimeter is twice the sum of width and height.", f"2 x ({w} + {h}) = {right}."],
        ["The perimeter is width times height.", f"{w} x {h} = {wrong}."],
        right,
        wrong,
        "perimeter",
    )


# -- code: a passing and a failing solution ------------------------------------------------------------


@dataclass(frozen=True)
class _CodeTask:
    entry: str
    description: str
    right: str
    wrong: str
    tests: list[tuple[tuple[Any, ...], Any]]
    family: str


def _code_sum_multiples(rng: random.Random) -> _CodeTask:
    k = rng.randint(2, 7)
    entry = f"sum_multiples_of_{k}"
    ref = lambda n: sum(i for i in range(1, n) if i % k == 0)  # noqa: E731
    cases = [k * rng.randint(2, 6), k * rng.randint(7, 12), rng.randint(1, k), 1]
    return _CodeTask(
        entry,
        f"returns the sum of the positive integers strictly below n that are multiples of {k}",
        f"def {entry}(n):\n    return sum(i for i in range(1, n) if i % {k} == 0)\n",
        f"def {entry}(n):\n    return sum(i for i in range(1, n + 1) if i % {k} == 0)\n",
        [((c,), ref(c)) for c in cases],
        "sum_multiples",
    )


def _code_count_vowels(rng: random.Random) -> _CodeTask:
    entry = rng.choice(["count_vowels", "vowel_count", "num_vowels"])
    words = ["Banana", "ECHO", "kiwi", "Umbrella", "rhythm", "AudioVisual", "Otter", "queue"]
    cases = [*rng.sample(words, 4), "AEIOU"]
    return _CodeTask(
        entry,
        "returns how many vowels (a, e, i, o, u, in either case) the string s contains",
        f"def {entry}(s):\n    return sum(1 for ch in s.lower() if ch in 'aeiou')\n",
        f"def {entry}(s):\n    return sum(1 for ch in s if ch in 'aeiou')\n",
        [((w,), sum(1 for ch in w.lower() if ch in "aeiou")) for w in cases],
        "count_vowels",
    )


def _code_second_largest(rng: random.Random) -> _CodeTask:
    entry = rng.choice(["second_largest", "runner_up", "second_max"])
    cases = [rng.sample(range(1, 50), 5) for _ in range(2)]
    top = rng.randint(50, 90)
    cases.append([top, top, rng.randint(1, 40), rng.randint(1, 40)])
    return _CodeTask(
        entry,
        "returns the second largest distinct value in the list xs (it has at least two distinct values)",
        f"def {entry}(xs):\n    return sorted(set(xs))[-2]\n",
        f"def {entry}(xs):\n    return sorted(xs)[-2]\n",
        [((c,), sorted(set(c))[-2]) for c in cases],
        "second_largest",
    )


def _code_reverse_words(rng: random.Random) -> _CodeTask:
    entry = rng.choice(["reverse_words", "flip_word_order", "words_backwards"])
    vocab = ["red", "fox", "jumps", "over", "blue", "moon", "quiet", "river", "stone", "light"]
    cases = [" ".join(rng.sample(vocab, rng.randint(2, 4))) for _ in range(3)]
    return _CodeTask(
        entry,
        "returns the words of sentence s in reverse order, separated by single spaces",
        f"def {entry}(s):\n    return ' '.join(reversed(s.split()))\n",
        f"def {entry}(s):\n    return s[::-1]\n",
        [((c,), " ".join(reversed(c.split()))) for c in cases],
        "reverse_words",
    )


def _code_digit_sum(rng: random.Random) -> _CodeTask:
    entry = rng.choice(["digit_sum", "sum_of_digits", "add_digits"])
    cases = [rng.randint(10, 99999), -rng.randint(10, 9999), 0]
    return _CodeTask(
        entry,
        "returns the sum of the decimal digits of the integer n (negative numbers count their digits too)",
        f"def {entry}(n):\n    return sum(int(d) for d in str(abs(n)))\n",
        f"def {entry}(n):\n    return sum(int(d) for d in str(n))\n",
        [((c,), sum(int(d) for d in str(abs(c)))) for c in cases],
        "digit_sum",
    )


def _code_running_total(rng: random.Random) -> _CodeTask:
    entry = rng.choice(["running_total", "prefix_sums", "cumulative_sum"])
    cases = [[rng.randint(-5, 9) for _ in range(rng.randint(2, 6))] for _ in range(3)]

    def ref(xs: list[int]) -> list[int]:
        out, acc = [], 0
        for x in xs:
            acc += x
            out.append(acc)
        return out

    return _CodeTask(
        entry,
        "returns the list of running totals of xs (element i is the sum of xs[0..i])",
        f"def {entry}(xs):\n    out, acc = [], 0\n    for x in xs:\n        acc += x\n"
        "        out.append(acc)\n    return out\n",
        f"def {entry}(xs):\n    return [sum(xs[:i]) for i in range(len(xs))]\n",
        [((c,), ref(c)) for c in cases],
        "running_total",
    )


def _code_draft(rng: random.Random) -> Draft:
    task = rng.choice(_CODE_TASKS)(rng)
    example_args, example_out = task.tests[0]
    example = f"{task.entry}({', '.join(map(repr, example_args))})"
    prompt = (
        f"Write a Python function `{task.entry}` that {task.description}. "
        f"Example: `{example}` returns `{example_out!r}`."
    )
    tests = {
        "language": "python",
        "fn_name": task.entry,
        "calls": [{"args": list(args), "expected": expected} for args, expected in task.tests],
    }

    def terse(src: str) -> str:
        return f"```python\n{src}```"

    def long(src: str) -> str:
        args, expected = task.tests[1]
        call = f"{task.entry}({', '.join(map(repr, args))})"
        return (
            f"Here is a clear, idiomatic implementation of `{task.entry}`. It handles the general case directly "
            "and keeps the logic in a single readable expression where possible.\n\n"
            f"```python\n{src}```\n\n"
            f"For example, `{call}` is expected to give `{expected!r}`. The function runs in linear time in the "
            "size of its input and uses no external libraries."
        )

    return Draft(
        prompt=prompt,
        right_terse=terse(task.right),
        right_long=long(task.right),
        wrong_terse=terse(task.wrong),
        wrong_long=long(task.wrong),
        check=GoldCheck(reward="code_tests", config={"scoring": "all_or_nothing"}, columns={"tests": tests}),
        family=task.family,
    )


_CODE_TASKS: list[Callable[[random.Random], _CodeTask]] = [
    _code_sum_multiples,
    _code_count_vowels,
    _code_second_largest,
    _code_reverse_words,
    _code_digit_sum,
    _code_running_total,
]


# -- format / instruction following ---------------------------------------------------------------------

_SYLLABLES = ["ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "an", "is", "ul", "pe", "bri", "mon"]


def _place_name(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def _format_json(rng: random.Random) -> Draft:
    town, pop = _place_name(rng), rng.randint(1_000, 900_000)
    prompt = (
        f"Record: the town of {town} has {pop} inhabitants.\n"
        'Reply with only a JSON object with the keys "town" (a string) and "population" (an integer).'
    )
    right = {"town": town, "population": pop}
    bad = rng.choice([{"town": town, "population": str(pop)}, {"town": town}, {"name": town, "population": pop}])
    schema = {
        "type": "object",
        "properties": {"town": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["town", "population"],
    }
    return Draft(
        prompt,
        json.dumps(right, separators=(",", ":")),
        json.dumps(right, indent=4),
        json.dumps(bad, separators=(",", ":")),
        json.dumps(bad, indent=4),
        GoldCheck(reward="json_schema", config={"json_schema": schema}),
        "json_schema",
    )


def _format_answer_line(rng: random.Random) -> Draft:
    x, y = rng.randint(11, 99), rng.randint(11, 99)
    prompt = f"What is {x} + {y}? Finish your reply with a final line of the form `ANSWER: <number>`."
    work = (
        f"First add the tens: {x // 10 * 10} + {y // 10 * 10} = {x // 10 * 10 + y // 10 * 10}. "
        f"Then add the ones: {x % 10} + {y % 10} = {x % 10 + y % 10}. Together that makes {x + y}.\n"
    )
    right = f"{x} + {y} = {x + y}.\nANSWER: {x + y}"
    wrong = rng.choice(
        [
            f"{x} + {y} = {x + y}.\nThe answer is {x + y}.",
            f"{x} + {y} = {x + y}.\nANSWER = {x + y}",
            f"ANSWER: {x + y}\n{x} + {y} = {x + y}.",
        ]
    )
    check = GoldCheck(reward="regex_match", config={"pattern": r"(?m)^ANSWER: \d+\s*\Z"})
    return Draft(prompt, right, work + right, wrong, work + wrong, check, "answer_line")


def _format_lowercase(rng: random.Random) -> Draft:
    town = _place_name(rng)
    prompt = f"Describe the town of {town} in a sentence or two. Write everything in lowercase letters only."
    first = f"{town} is a quiet town with a small harbour and a weekly market."
    second = " Its narrow streets climb a green hill, and most visitors come for the fresh fish and the views."
    right_terse, right_long = first.lower(), (first + second).lower()
    shout = rng.random() < 0.5
    wrong_terse = first.upper() if shout else first
    wrong_long = (first + second).upper() if shout else first + second
    check = GoldCheck(reward="regex_match", config={"pattern": r"\A[^A-Z]+\Z"})
    return Draft(prompt, right_terse, right_long, wrong_terse, wrong_long, check, "lowercase")


def _format_think(rng: random.Random) -> Draft:
    x, y = rng.randint(2, 12), rng.randint(2, 12)
    prompt = (
        f"What is {x} times {y}? Reason inside <think> and </think> tags first, "
        "then give the final answer after the closing tag."
    )
    short = f"{x} times {y} is {x * y}."
    long = (
        f"{x} times {y} means adding {x} to itself {y} times. Counting up in steps of {x}: "
        + ", ".join(str(x * k) for k in range(1, y + 1))
        + f". So the product is {x * y}."
    )
    answer = f"The answer is {x * y}."
    shape = rng.choice(["unclosed", "untagged", "answer_inside"])

    def wrong(reasoning: str) -> str:
        if shape == "unclosed":
            return f"<think>{reasoning}\n{answer}"
        if shape == "untagged":
            return f"{reasoning}\n{answer}"
        return f"<think>{reasoning} {answer}</think>"

    return Draft(
        prompt,
        f"<think>{short}</think>\n{answer}",
        f"<think>{long}</think>\n{answer}",
        wrong(short),
        wrong(long),
        GoldCheck(reward="think_format"),
        "think_format",
    )


def _format_draft(rng: random.Random) -> Draft:
    return rng.choice(_FORMAT_TASKS)(rng)


_FORMAT_TASKS: list[Callable[[random.Random], Draft]] = [
    _format_json,
    _format_answer_line,
    _format_lowercase,
    _format_think,
]

_MATH_TASKS: list[Callable[[random.Random], Draft]] = [
    _math_change,
    _math_linear,
    _math_series,
    _math_percent,
    _math_rectangle,
]


def _math_draft_any(rng: random.Random) -> Draft:
    return rng.choice(_MATH_TASKS)(rng)


_MAKERS: dict[str, Callable[[random.Random], Draft]] = {
    "math": _math_draft_any,
    "code": _code_draft,
    "format": _format_draft,
}
