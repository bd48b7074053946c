"""Reading a judge request the way a test server does: the texts a judge template quoted between keyed tags.

Untrusted values reach a judge as ``<label-KEY>\\ntext\\n</label-KEY>`` (:mod:`rewardsmith.judges.untrusted`);
these helpers find them again, so scripted judges and routing needles do not depend on the template's wording.
"""

from __future__ import annotations

import re

_QUOTED = re.compile(r"<(?P<label>[\w-]+)-(?P<key>[a-z]{16})>\n(?P<text>.*?)\n</(?P=label)-(?P=key)>", re.DOTALL)


def quoted(content: str, label: str) -> str:
    """The text quoted under ``label`` (``prompt``, ``response``, ``response-A``, ``response-2`` …) in ``content``."""
    for match in _QUOTED.finditer(content):
        if match.group("label") == label:
            return match.group("text")
    raise AssertionError(f"no <{label}-…> block in {content[:200]!r}")


def quoted_candidates(content: str) -> list[str]:
    """The candidates of a listwise request in the order shown (``response-1``, ``response-2`` …)."""
    found = {
        int(m.group("label").rsplit("-", 1)[1]): m.group("text")
        for m in _QUOTED.finditer(content)
        if re.fullmatch(r"response-\d+", m.group("label"))
    }
    return [found[i] for i in sorted(found)]


def shown_as(label: str, text: str) -> str:
    """A needle found in a request exactly when ``text`` is quoted under ``label`` (``shown_as("response-A", "4")``)."""
    return f">\n{text}\n</{label}-"
