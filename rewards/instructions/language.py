"""Language identification with ``langdetect`` (the detector IFEval uses), seeded so verdicts repeat.

``langdetect`` samples n-grams at random; a private factory with a fixed seed makes the same text get the same
answer on every call without touching the library's global state. Text that has no detectable language counts as
following the instruction, as in the reference. Only the first :data:`MAX_CHARS` characters are read: the
language of a response is settled long before that, and detection cost stays bounded.
"""

from __future__ import annotations

import functools
from typing import Any

MAX_CHARS = 20_000


class LanguageUnavailable(RuntimeError):
    """``langdetect`` is not installed."""


def require() -> None:
    """Raise :class:`LanguageUnavailable` unless ``langdetect`` can be imported."""
    try:
        import langdetect  # noqa: F401
    except ModuleNotFoundError:
        raise LanguageUnavailable("language checks need langdetect (pip install 'rewardsmith[instructions]')") from None


@functools.cache
def _seeded_factory() -> Any:
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.seed = 0
    return factory


def detect(text: str) -> str | None:
    """ISO 639-1 code of ``text`` (``zh-cn``/``zh-tw`` for Chinese), or ``None`` when nothing is detectable."""
    from langdetect.lang_detect_exception import LangDetectException

    detector = _seeded_factory().create()
    detector.append(text[:MAX_CHARS])
    try:
        return detector.detect()
    except LangDetectException:
        return None


def is_language(text: str, code: str) -> bool:
    """Whether ``text`` is in ``code``; undetectable text passes (the reference logs it and returns true)."""
    found = detect(text)
    return found is None or found == code
