"""The embedded judge's default pairwise method: the likelihood judge, unless a letter-judge option was asked for.

Apart from :mod:`.pointwise` because it needs to know the embedded client's model names: the embedded client
scores log-likelihoods through :mod:`.pointwise`, so :mod:`.pointwise` itself must not import it (no import cycle).
"""

from __future__ import annotations

from rewardsmith.judges.base import ChatClient
from rewardsmith.judges.clients.embedded import INPROCESS_MODEL_NAME, SERVER_MODEL_NAME
from rewardsmith.judges.pointwise import LikelihoodJudge

EMBEDDED_NOTE = (
    "note: the embedded judge ({model}) scores each response by its likelihood under the model: no position, "
    "and the principle is recorded, not read (--judge-template pairwise asks SmolLM2 'A or B' instead, and follows "
    "the position). It agrees with the demo's marked-better responses 16/18 times, which are easy; on the audit's "
    "verified pairs it is at chance."
)


def is_embedded(client: ChatClient) -> bool:
    """``client`` talks to the packaged SmolLM2 (``make_client("embedded")``, its server or in-process)."""
    return getattr(client, "model", None) in (SERVER_MODEL_NAME, INPROCESS_MODEL_NAME)


def embedded_default_judge(
    client: ChatClient, *, template: str | None, use_logprobs: bool, chain_of_thought: bool
) -> LikelihoodJudge | None:
    """The likelihood judge when ``client`` is the embedded model and no letter-judge option was asked for.

    SmolLM2-135M's "A or B" answer follows the position (100% flips on the demo); its likelihood does not.
    An explicit template, chain of thought or ``use_logprobs=False`` keeps the letter judge (``None`` here).
    """
    if template is not None or chain_of_thought or not use_logprobs or not is_embedded(client):
        return None
    return LikelihoodJudge(client, note=EMBEDDED_NOTE.format(model=client.model))
