"""The judge's comparison prompt for a constitution: its template override and few-shot examples.

A pairwise judge takes a template name or a ``.jinja`` path (``rewardsmith.judges`` prompt format).
When a constitution overrides the comparison template or ships comparison examples, the effective
template is written once into the run's state folder and its path is handed to the judge. Example
turns are inserted before the first user turn as literal text, answered the way the judge is
asked to answer (a letter, or reasoning then ``Verdict: X`` with chain-of-thought). The template is
rendered in jinja's sandbox (see :mod:`rewardsmith.judges.templates`) and checked before it is written.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from rewardsmith.constitutions.schema import ComparisonExample, Constitution

_FIRST_USER = re.compile(r"^\[user\]\s*$", flags=re.MULTILINE)


def comparison_template(
    constitution: Constitution, base: str | None, *, chain_of_thought: bool, state_dir: Path
) -> str | None:
    """A template name or path for the judge; ``base`` (or the judge's default when ``None``) if nothing to add."""
    from rewardsmith.judges.templates import check_source, template_text

    examples = constitution.examples.comparison
    if constitution.templates.comparison is None and not examples:
        return base
    source = constitution.templates.comparison or template_text(
        base or ("pairwise_cot" if chain_of_thought else "pairwise")
    )
    check_source(source, name="comparison template", prompt="p", first="a", second="b", question=None)
    if examples:
        source = with_examples(source, examples, chain_of_thought=chain_of_thought)
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]
    path = state_dir / f"comparison-{digest}.jinja"
    if not path.exists():
        state_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(source, encoding="utf-8")
        tmp.replace(path)
    return str(path)


def with_examples(source: str, examples: tuple[ComparisonExample, ...], *, chain_of_thought: bool) -> str:
    """``source`` with one solved user/assistant exchange per example before its first user turn.

    Each example is rendered the way a live comparison is (its responses quoted between keyed tags) and written
    into the template as one jinja string literal per turn: the example's text is shown, never evaluated, and a
    role line inside it cannot become a turn of the template.
    """
    from rewardsmith.judges.templates import render_template_source

    turns = []
    for example in examples:
        rendered = render_template_source(
            source,
            name="comparison template",
            prompt=example.prompt,
            first=example.response_a,
            second=example.response_b,
            question=None,
        )
        asked = "\n\n".join(m["content"] for m in rendered if m["role"] == "user")
        if chain_of_thought:
            answer = f"{example.explanation}\nVerdict: {example.preferred}".strip()
        else:
            answer = example.preferred
        turns.append(f"[user]\n{_literal(asked)}\n[assistant]\n{_literal(answer)}\n")
    match = _FIRST_USER.search(source)
    at = match.start() if match else 0
    return source[:at] + "".join(turns) + source[at:]


def _literal(text: str) -> str:
    """``text`` as one jinja string expression on one line: shown as is, braces and role lines included.

    Every character outside printable ASCII (newlines too) and the quote are backslash escapes, which jinja's
    lexer decodes back (``unicode-escape``).
    """
    escaped = text.encode("unicode_escape").decode("ascii").replace('"', "\\x22")
    return '{{ "' + escaped + '" }}'
