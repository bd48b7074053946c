"""Read a row's constraints in the shapes the public datasets ship, into named checks.

- Google IFEval: parallel columns ``instruction_id_list`` (``["punctuation:no_comma", ...]``) and ``kwargs``
  (``[{}, {"num_words": 300, "relation": "at least"}, ...]``; Hugging Face pads each dict with nulls).
- RLVR ``ground_truth`` JSON, single-constraint: ``{"func_name": "verify_keywords", "keyword_list": [...], "N": null}``.
- RLVR ``ground_truth`` in IFEval form (open-instruct's multi-constraint data): ``{"instruction_id": [...],
  "kwargs": [...]}``, possibly inside a one-element list, as JSON or as a Python literal.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.rewards.instructions.checkers import Check, ConstraintError, build_check
from rewardsmith.rewards.instructions.language import LanguageUnavailable
from rewardsmith.rewards.instructions.rlvr import build_function_check

#: Ground-truth strings longer than this are not parsed (a constraint spec is a few hundred characters).
MAX_GROUND_TRUTH_CHARS = 100_000


@dataclass(frozen=True)
class Constraint:
    """One instruction to check: its id (for reasons) and the check built from its arguments."""

    id: str
    check: Check


def constraints_from_ifeval(ids: Any, kwargs: Any) -> list[Constraint]:
    """Constraints from IFEval's parallel ``instruction_id_list`` and ``kwargs`` columns."""
    if isinstance(ids, str) or not isinstance(ids, Sequence) or not ids:
        raise ConstraintError(f"instruction ids must be a non-empty list, got {_short(ids)}")
    if kwargs is None:
        kwargs = [{} for _ in ids]
    if isinstance(kwargs, str):
        kwargs = _parse(kwargs)
    if isinstance(kwargs, str) or not isinstance(kwargs, Sequence) or len(kwargs) != len(ids):
        raise ConstraintError(f"kwargs must be a list of {len(ids)} mappings, got {_short(kwargs)}")
    return [_built(i, lambda i=i, k=k: build_check(i, k)) for i, k in zip(ids, kwargs, strict=True)]


def constraints_from_ground_truth(ground_truth: Any) -> list[Constraint]:
    """Constraints from an RLVR ``ground_truth`` value (JSON text, Python-literal text, a mapping or a list)."""
    spec = _parse(ground_truth) if isinstance(ground_truth, str) else ground_truth
    if isinstance(spec, Sequence) and not isinstance(spec, str) and len(spec) == 1:
        spec = spec[0]
        if isinstance(spec, str):
            spec = _parse(spec)
    if not isinstance(spec, Mapping):
        raise ConstraintError(f"ground truth must describe constraints, got {_short(ground_truth)}")
    if "func_name" in spec:
        name = spec["func_name"]
        args = {k: v for k, v in spec.items() if k != "func_name"}
        return [_built(str(name), lambda: build_function_check(name, args))]
    ids = spec.get("instruction_id", spec.get("instruction_id_list"))
    if ids is None:
        raise ConstraintError("ground truth has neither 'func_name' nor 'instruction_id'")
    return constraints_from_ifeval(ids, spec.get("kwargs"))


def _built(instruction_id: str, make: Any) -> Constraint:
    try:
        return Constraint(instruction_id, make())
    except LanguageUnavailable as exc:
        raise ConstraintError(f"{instruction_id}: {exc}") from None
    except ConstraintError as exc:
        message = str(exc)
        raise ConstraintError(message if message.startswith("unknown") else f"{instruction_id}: {message}") from None


def _parse(text: str) -> Any:
    if len(text) > MAX_GROUND_TRUTH_CHARS:
        raise ConstraintError(f"constraint text of {len(text)} characters is too long to be a constraint spec")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:  # open-instruct writes some ground truths with Python's repr (single quotes, None)
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise ConstraintError(f"constraint text is neither JSON nor a Python literal: {_short(text)}") from None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
