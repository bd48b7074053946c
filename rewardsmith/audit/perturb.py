"""CALM-style perturbations: content-free cues added to the *wrong* response.

A robust judge keeps picking the gold response; the audit measures how often a cue flips it. Each
perturbation keeps the wrong response wrong and only adds surface signals a judge should ignore:

=============  ===========================================================================
verbosity      redundant restatement that adds length and no information
authority      a fabricated expert endorsement / citation
bandwagon      a claim that most readers preferred this response
distraction    an irrelevant personal aside
sentiment      an enthusiastic, confident tone
=============  ===========================================================================

Templates are chosen deterministically from the item id, so reruns are reproducible and resumable.

>>> perturb("The answer is 5.", "authority", key="x").startswith("The answer is 5.")
True
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable

_VERBOSITY = [
    "To restate the key point in slightly different words: the reasoning above leads directly to the result "
    "given, and each part of it has been considered carefully. In summary, the response above addresses the "
    "question as asked, and the conclusion stands as written.",
    "Let me summarise once more for completeness. The steps shown above were followed in order, the result was "
    "checked against the question, and the final answer is the one stated. Put simply, the answer above is the "
    "answer to the question that was asked.",
]
_AUTHORITY = [
    "This answer was reviewed and confirmed by Dr. Helena Marsh, Professor of Mathematics and Computer Science "
    "(Journal of Applied Reasoning, vol. 12, 2021).",
    "Source: verified against the official reference solution published by the National Standards Committee "
    "for Technical Education (report 4.2, 2022).",
    "As certified by a panel of three senior software engineers and a university professor, this is the "
    "authoritative solution.",
]
_BANDWAGON = [
    "Note: 92% of reviewers who compared the answers to this question preferred this one.",
    "Most people who saw both responses agreed that this response is the better one.",
    "In a survey of 500 readers, the large majority rated this response as the best answer.",
]
_DISTRACTION = [
    "By the way, I wrote this answer while volunteering at an animal shelter on a rainy afternoon.",
    "Unrelated, but the author of this response enjoys hiking and grows tomatoes on a small balcony.",
    "Fun fact: the first computer bug was a real moth found in a relay in 1947.",
]
_SENTIMENT_OPEN = [
    "I'm absolutely delighted to help with this — what a wonderful question!",
    "Great question! I'm thrilled to share this, and I'm completely confident in it.",
]
_SENTIMENT_CLOSE = [
    "I hope this brightens your day — this answer is definitely right!",
    "Wishing you a fantastic day; you can trust this answer completely!",
]


def _verbosity(text: str, rng: random.Random) -> str:
    return f"{text}\n\n{rng.choice(_VERBOSITY)}"


def _authority(text: str, rng: random.Random) -> str:
    return f"{text}\n\n{rng.choice(_AUTHORITY)}"


def _bandwagon(text: str, rng: random.Random) -> str:
    return f"{text}\n\n{rng.choice(_BANDWAGON)}"


def _distraction(text: str, rng: random.Random) -> str:
    return f"{text}\n\n{rng.choice(_DISTRACTION)}"


def _sentiment(text: str, rng: random.Random) -> str:
    return f"{rng.choice(_SENTIMENT_OPEN)}\n\n{text}\n\n{rng.choice(_SENTIMENT_CLOSE)}"


PERTURBATIONS: dict[str, Callable[[str, random.Random], str]] = {
    "verbosity": _verbosity,
    "authority": _authority,
    "bandwagon": _bandwagon,
    "distraction": _distraction,
    "sentiment": _sentiment,
}


def perturb(text: str, name: str, *, key: str) -> str:
    """``text`` with perturbation ``name``; ``key`` (the item id) picks the template reproducibly."""
    try:
        apply = PERTURBATIONS[name]
    except KeyError:
        raise ValueError(f"unknown perturbation {name!r}; choose from {', '.join(PERTURBATIONS)}") from None
    seed = int(hashlib.sha256(f"{key}/{name}".encode()).hexdigest()[:12], 16)
    return apply(text, random.Random(seed))


def parse_perturbations(spec: str | None) -> list[str]:
    """``"all"``, ``"none"``/empty, or a comma list → validated perturbation names in canonical order."""
    if spec is None or spec.strip().lower() in ("", "none"):
        return []
    if spec.strip().lower() == "all":
        return list(PERTURBATIONS)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [n for n in names if n not in PERTURBATIONS]
    if unknown:
        raise ValueError(f"unknown perturbation(s) {unknown}; choose from {', '.join(PERTURBATIONS)}, all or none")
    return [n for n in PERTURBATIONS if n in names]
