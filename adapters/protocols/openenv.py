"""A reward spec as an OpenEnv rubric (openenv-core 0.3, ``openenv.core.rubrics.Rubric``, RFC 004).

An OpenEnv environment computes its reward inside ``step()``: ``observation.reward = self._apply_rubric(action,
observation)``, where its ``rubric`` is called as ``rubric(action, observation)`` and children assigned as attributes
show in ``rubric.named_rubrics()`` with their ``last_score``. :func:`spec_rubric` builds such a rubric from a spec::

    from rewardsmith.adapters.protocols.openenv import spec_rubric

    class MathEnv(Environment):
        def __init__(self):
            super().__init__(rubric=spec_rubric("spec.yaml", columns=lambda action, obs: self.task))

It has one child per term (``named_rubrics()`` gives ``math_equivalence``, ``think_format``, ...), each scoring the
completion (``action.message`` by default) against the gold columns ``columns(action, observation)`` returns. The
rubric's value is the strict weighted sum of :mod:`.verdict`; an unscorable sample is ``None``, which OpenEnv's
``Observation.reward`` holds as "no reward" (never a 0). The verdict (reward, each term's score and reason) is
``rubric.last_verdict`` and ``observation.metadata["rewardsmith"]``; OpenEnv's wire format leaves ``metadata`` out,
so an environment that wants the reason at the client copies it into a field of its own observation. A completion or
gold the rubric cannot read (an action without the attribute, a ``columns`` function that raises) is a
configuration fault: ``None`` with the reason, logged once per rubric, never an exception in ``step()``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from typing import Any

from rewardsmith.adapters.protocols.verdict import RESERVED_COLUMNS, TermVerdict, Verdict
from rewardsmith.reward import ConfigError, Reward
from rewardsmith.types import RewardResult

logger = logging.getLogger(__name__)

#: The observation metadata key that carries the verdict to the client.
METADATA_KEY = "rewardsmith"
INSTALL_HINT = "pip install 'openenv-core>=0.3,<0.4'"

Extract = Callable[[Any, Any], Any]


def spec_rubric(spec: Any, *, completion: str | Extract = "message", columns: Extract | None = None) -> Any:
    """An OpenEnv ``Rubric`` scoring with every term of ``spec`` (a spec file, a list of terms or ``{rewards: ...}``).

    ``completion``: the action's attribute holding the completion, or a function of ``(action, observation)``.
    ``columns``: a function of ``(action, observation)`` returning the gold columns (``{"solution": "4"}``); None
    when the spec's rewards need no gold.
    """
    from rewardsmith.adapters.spec import load_spec

    loaded = load_spec(spec)
    extract = _attribute(completion) if isinstance(completion, str) else completion
    term_class, spec_class = rubric_classes()
    rewards = [term.build() for term in loaded.rewards]
    terms = [term_class(r, w) for r, w in zip(rewards, loaded.reward_weights(), strict=True)]
    return spec_class(terms, extract, columns or _no_columns)


@functools.cache
def rubric_classes() -> tuple[type, type]:
    """The two rubric classes, made once on OpenEnv's ``Rubric`` (imported here: the module itself needs no OpenEnv)."""
    try:
        from openenv.core.rubrics import Rubric
    except ImportError as exc:
        raise ImportError(f"spec_rubric() needs OpenEnv ({exc}): {INSTALL_HINT}") from None

    class TermRubric(Rubric):
        """One term of the spec; its parent hands it the sample it read (``last_verdict``: the term's verdict)."""

        def __init__(self, reward: Reward, weight: float) -> None:
            super().__init__()
            self.reward, self.weight = reward, weight
            self.sample: tuple[Any, dict[str, Any]] | None = None
            self.last_verdict: TermVerdict | None = None

        def forward(self, action: Any, observation: Any) -> float | None:
            if self.sample is None:
                raise RuntimeError("a spec term is scored by its SpecRubric, not called on its own")
            text, row = self.sample
            try:
                result = self.reward.details([text], **{key: [value] for key, value in row.items()})[0]
            except Exception as exc:  # rewards guard themselves; this guards the guard
                result = RewardResult.unscorable(f"internal error: {type(exc).__name__}: {exc}")
            self.last_verdict = TermVerdict.of(self.reward.__name__, self.weight, result)
            return self.last_verdict.score

    class SpecRubric(Rubric):
        """Every term of a spec, combined strictly (:mod:`rewardsmith.adapters.protocols.verdict`)."""

        def __init__(self, terms: list[Any], completion: Extract, columns: Extract) -> None:
            super().__init__()
            self.terms, self.completion, self.columns = terms, completion, columns
            self.last_verdict: Verdict | None = None
            self._warned = False
            for term in terms:
                name = term.reward.__name__
                if hasattr(self, name):
                    raise ConfigError(f"a term logged as {name!r} would hide the rubric attribute {name!r}: label it")
                setattr(self, name, term)  # a child rubric under the term's logged name (named_rubrics())

        def forward(self, action: Any, observation: Any) -> float | None:
            problem, sample = self._read(action, observation)
            if problem is not None:
                if not self._warned:
                    logger.warning("rewardsmith rubric: %s", problem)
                    self._warned = True
                verdict = Verdict(tuple(TermVerdict(t.reward.__name__, t.weight, None, problem) for t in self.terms))
            else:
                for term in self.terms:
                    term.sample = sample
                    term(action, observation)  # through Rubric.__call__: hooks and last_score as OpenEnv keeps them
                    term.sample = None
                verdict = Verdict(tuple(t.last_verdict for t in self.terms))
            self.last_verdict = verdict
            metadata = getattr(observation, "metadata", None)
            if isinstance(metadata, dict):
                metadata[METADATA_KEY] = verdict.as_record()
            return verdict.reward

        def _read(self, action: Any, observation: Any) -> tuple[str | None, tuple[Any, dict[str, Any]]]:
            try:
                text = self.completion(action, observation)
            except Exception as exc:
                return f"configuration: cannot read the completion: {type(exc).__name__}: {exc}", (None, {})
            try:
                row = self.columns(action, observation)
            except Exception as exc:
                return f"configuration: cannot read the gold columns: {type(exc).__name__}: {exc}", (None, {})
            if not isinstance(row, Mapping):
                return f"configuration: columns() returned {type(row).__name__}, not a mapping", (None, {})
            clash = sorted(RESERVED_COLUMNS & set(map(str, row)))
            if clash:
                return f"configuration: {clash[0]!r} cannot be a gold column", (None, {})
            return None, (text, {str(k): v for k, v in row.items()})

    return TermRubric, SpecRubric


def _attribute(name: str) -> Extract:
    def read(action: Any, observation: Any) -> Any:
        return getattr(action, name)

    read.__name__ = f"action.{name}"
    return read


def _no_columns(action: Any, observation: Any) -> Mapping[str, Any]:
    return {}


__all__ = ["METADATA_KEY", "rubric_classes", "spec_rubric"]
