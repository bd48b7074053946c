"""Self-preference items: put the judge's own answers into the audit set.

The judge's client answers an item's prompt; the item's verifier scores that answer. A right own
answer is paired with the item's wrong response (gold = own), a wrong one with the item's gold
response (gold = the other). ``author_a``/``author_b`` name the judge's model, so the audit's
``self_preference`` metric can compare how often the judge picks its own answer when it is wrong.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence

from rewardsmith.heldout.sets import AuditItem, item_id
from rewardsmith.judges.base import ChatClient, ChatParams, JudgeError

logger = logging.getLogger(__name__)

OTHER_AUTHOR = "rewardsmith-generator"


def own_generation_items(
    items: Sequence[AuditItem], client: ChatClient, k: int, *, max_tokens: int = 256, seed: int = 0
) -> list[AuditItem]:
    """Up to ``k`` new items, each pairing the client's own answer with a response of the opposite verdict."""
    from rewardsmith.registry import get_reward
    from rewardsmith.reward import ConfigError

    author = client.model
    rng = random.Random(seed)
    params = ChatParams(temperature=0.0, max_tokens=max_tokens, seed=seed)
    out: list[AuditItem] = []
    for item in [it for it in items if it.check is not None and it.gold in ("a", "b")]:
        if len(out) >= k:
            break
        try:
            answer = client.complete([{"role": "user", "content": item.prompt}], params).text.strip()
        except JudgeError as exc:
            logger.warning("could not generate an own answer for %s: %s", item.id, exc)
            continue
        check = item.check
        if not answer or check is None:  # the list holds checked items only; this tells the type checker
            continue
        try:
            reward = get_reward(check.reward, check.config)
        except ConfigError as exc:
            logger.warning("no verifier for %s: %s", item.id, exc)
            continue
        columns = {c: [v] for c, v in check.columns.items()}
        score = reward.details([answer], prompts=[item.prompt], **columns)[0].score
        if score is None:
            continue
        own_right = score >= 1.0
        other = (item.response_b if item.gold == "a" else item.response_a) if own_right else item.gold_response
        if other is None or other == answer:  # never None: the gold is a or b
            continue
        own_first = rng.random() < 0.5
        a, b = (answer, other) if own_first else (other, answer)
        gold = ("a" if own_first else "b") if own_right else ("b" if own_first else "a")
        category = f"self-{item.category}"
        out.append(
            AuditItem(
                id=item_id(category, item.prompt, a, b),
                prompt=item.prompt,
                response_a=a,
                response_b=b,
                gold=gold,
                category=category,
                author_a=author if own_first else OTHER_AUTHOR,
                author_b=OTHER_AUTHOR if own_first else author,
                check=item.check,
                metadata={"source_item": item.id, "own_right": own_right},
            )
        )
    return out
