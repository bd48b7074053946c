"""The constitution file format: a YAML document validated by the pydantic models below.

A constitution names the principles an AI labeller applies. Each principle carries the three texts
Constitutional AI needs: a comparison question (RL stage: "which response is better?"), a critique
request and a revision request (SL stage). Everything else is optional.

```yaml
name: helpful-harmless            # slug: lowercase letters, digits, '-'
description: One paragraph on what this constitution is for.
principles:
  - id: helpful                   # unique slug within the file
    comparison: Which response answers the user's request more directly and usefully?
    critique: Identify specific ways in which the response fails to answer the request.
    revision: Rewrite the response so that it answers the request directly and usefully.
examples:                         # optional few-shot examples
  comparison:
    - {prompt: "...", response_a: "...", response_b: "...", preferred: A, explanation: "..."}
  revision:
    - {prompt: "...", response: "...", critique: "...", revision: "..."}
templates:                        # optional prompt-template overrides (jinja)
  critique: "{{ critique_request }} Answer in two sentences."
  revision: "{{ revision_request }} Reply with the rewritten response only."
```

Templates are jinja texts. ``comparison`` is a whole judge conversation in the format of
``rewardsmith.judges`` prompt files (``[system]``/``[user]`` lines; variables ``prompt``, ``first``,
``second``, ``question``). ``critique`` and ``revision`` are the user turns appended after the
response (variables: the request, ``prompt``, ``response`` and, for revision, ``critique``).

Errors name the file, the field path and what is wrong: ``my.yaml: principles[1].critique: field required``.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")

#: Variables each overridable (jinja) template may use.
TEMPLATE_FIELDS: dict[str, frozenset[str]] = {
    "comparison": frozenset({"prompt", "first", "second", "question"}),
    "critique": frozenset({"critique_request", "prompt", "response"}),
    "revision": frozenset({"revision_request", "prompt", "response", "critique"}),
}
#: Sample values for the dry render that validation does.
TEMPLATE_SAMPLES: dict[str, dict[str, str | None]] = {
    "comparison": {"prompt": "p", "first": "a", "second": "b", "question": None},
    "critique": {"critique_request": "Critique it.", "prompt": "p", "response": "r"},
    "revision": {"revision_request": "Revise it.", "prompt": "p", "response": "r", "critique": "c"},
}
#: Variables a template must use, else the responses or the principle would never reach the model.
TEMPLATE_REQUIRED: dict[str, frozenset[str]] = {
    "comparison": frozenset({"prompt", "first", "second", "question"}),
    "critique": frozenset({"critique_request"}),
    "revision": frozenset({"revision_request"}),
}


class ConstitutionError(ValueError):
    """A constitution file is unreadable or invalid; the message lists every problem as ``file: field: what``."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class Principle(_Strict):
    """One principle: what the labeller asks when comparing, critiquing and revising."""

    id: str = Field(description="unique slug, e.g. 'no-harm'")
    comparison: str = Field(min_length=10, description="question for pairwise preference labelling")
    critique: str = Field(min_length=10, description="critique request for the SL stage")
    revision: str = Field(min_length=10, description="revision request for the SL stage")

    @field_validator("id")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not SLUG.match(value):
            raise ValueError(f"{value!r} is not a slug (lowercase letters, digits and '-', starting alphanumeric)")
        return value


class ComparisonExample(_Strict):
    prompt: str = Field(min_length=1)
    response_a: str = Field(min_length=1)
    response_b: str = Field(min_length=1)
    preferred: Literal["A", "B"]
    explanation: str = ""


class RevisionExample(_Strict):
    prompt: str = Field(min_length=1)
    response: str = Field(min_length=1)
    critique: str = Field(min_length=1)
    revision: str = Field(min_length=1)


class Examples(_Strict):
    comparison: tuple[ComparisonExample, ...] = ()
    revision: tuple[RevisionExample, ...] = ()


class Templates(_Strict):
    """Prompt-template overrides; ``None`` keeps rewardsmith's default wording."""

    comparison: str | None = None
    critique: str | None = None
    revision: str | None = None

    @model_validator(mode="after")
    def _placeholders(self) -> Templates:
        for kind in TEMPLATE_FIELDS:
            text = getattr(self, kind)
            if text is not None:
                check_constitution_template(kind, text)
        return self


class Constitution(_Strict):
    """A named set of principles plus optional examples and template overrides."""

    name: str
    description: str = Field(min_length=1)
    principles: tuple[Principle, ...] = Field(min_length=1)
    examples: Examples = Field(default_factory=Examples)
    templates: Templates = Field(default_factory=Templates)

    @field_validator("name")
    @classmethod
    def _name_slug(cls, value: str) -> str:
        if not SLUG.match(value):
            raise ValueError(f"{value!r} is not a slug (lowercase letters, digits and '-', starting alphanumeric)")
        return value

    @field_validator("principles")
    @classmethod
    def _unique_ids(cls, principles: tuple[Principle, ...]) -> tuple[Principle, ...]:
        seen: set[str] = set()
        for principle in principles:
            if principle.id in seen:
                raise ValueError(f"duplicate principle id {principle.id!r}")
            seen.add(principle.id)
        return principles

    def principle(self, principle_id: str) -> Principle:
        for principle in self.principles:
            if principle.id == principle_id:
                return principle
        raise KeyError(f"constitution {self.name!r} has no principle {principle_id!r}")


def check_constitution_template(kind: str, text: str) -> None:
    """Raise ``ValueError`` if ``text`` is not a usable jinja template of the given kind."""
    import jinja2
    from jinja2 import meta

    from rewardsmith.judges.templates import _environment

    try:
        # the bounded sandbox's parse: a plain environment folds constants such as 9 ** (9 ** 9) while analysing
        names = meta.find_undeclared_variables(_environment().parse(text)) - {"_bounded_concat"}
    except jinja2.TemplateSyntaxError as exc:
        raise ValueError(f"{kind}: not a valid jinja template (line {exc.lineno}: {exc.message})") from None
    except RecursionError:  # ((((... thousands deep: jinja's parser recurses
        raise ValueError(f"{kind}: not a valid jinja template (nested too deeply)") from None
    unknown = names - TEMPLATE_FIELDS[kind]
    if unknown:
        raise ValueError(f"{kind}: unknown variable(s) {sorted(unknown)}; allowed: {sorted(TEMPLATE_FIELDS[kind])}")
    missing = TEMPLATE_REQUIRED[kind] - names
    if missing:
        raise ValueError(f"{kind}: missing variable(s) {sorted(missing)}")
    # A constitution is data from anywhere: scan for Python internals and dry-render in the sandbox.
    from rewardsmith.judges.templates import check_source

    try:
        check_source(text, name=f"{kind} template", **TEMPLATE_SAMPLES[kind])
    except jinja2.TemplateError as exc:
        raise ValueError(str(exc)) from None


def format_validation_error(source: str, exc: ValidationError) -> str:
    """One line per problem: ``source: field.path: message``."""
    lines = []
    errors = exc.errors()
    locations = [tuple(error.get("loc", ())) for error in errors]
    for error in errors:
        loc = tuple(error.get("loc", ()))
        # pydantic adds "too short" on a list whose only items were invalid; the item errors say more.
        if error.get("type") == "too_short" and any(other[: len(loc)] == loc and other != loc for other in locations):
            continue
        location = _location(loc)
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        if error.get("type") == "missing":
            message = "field required"
        elif error.get("type") == "extra_forbidden":
            message = "unknown field (check the spelling; see `rewardsmith constitutions show helpful-harmless`)"
        lines.append(f"{source}: {location or '<top level>'}: {message}")
    return "\n".join(lines)


def _location(loc: tuple[object, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text


def parse_constitution(data: object, source: str) -> Constitution:
    """Validate parsed YAML; raise :class:`ConstitutionError` listing every problem."""
    if not isinstance(data, dict):
        raise ConstitutionError(f"{source}: <top level>: expected a mapping with name, description, principles")
    try:
        return Constitution.model_validate(data)
    except ValidationError as exc:
        raise ConstitutionError(format_validation_error(source, exc)) from None
