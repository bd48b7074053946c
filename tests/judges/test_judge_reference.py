"""``llm_judge`` pairwise mode reads its reference like a completion: plain text or the assistant turns of messages.

The judge is a real HTTP server on 127.0.0.1 that answers "A" in both orders; the verdict table says which
reference cells give a judged pair and which are "no reference response", and the request must carry the
reference text.
"""

from __future__ import annotations

import pytest

from rewardsmith.registry import get_reward

REFERENCES = [
    # (reference cell, the text the judge must see, or None when there is no reference response)
    ("Paris.", "Paris."),
    ([{"role": "assistant", "content": "Paris."}], "Paris."),
    ({"role": "assistant", "content": "Paris."}, "Paris."),
    ([{"role": "assistant", "content": [{"type": "text", "text": "Paris."}]}], "Paris."),
    ([{"role": "user", "content": "Capital of France?"}, {"role": "assistant", "content": "Paris."}], "Paris."),
    ([{"role": "user", "content": "Capital of France?"}], None),  # a prompt is not a response
    ("", None),
    (None, None),
    (7, None),
]


@pytest.mark.parametrize(("reference", "seen"), REFERENCES)
def test_pairwise_reference_read_as_a_response(fault_server, reference, seen):
    reward = get_reward(
        "llm_judge",
        {
            "mode": "pairwise",
            "use_logprobs": False,
            "client": {"backend": "openai", "model": "m", "base_url": fault_server.base_url, "max_retries": 0},
        },
    )
    [result] = reward.details(["Lyon."], prompts=["Capital of France?"], reference=[reference])
    if seen is None:
        assert result.score is None and "no reference response" in result.reason
        assert fault_server.requests == []
        return
    assert result.score == 0.5 and result.flipped  # "A" in both orders: one win each
    assert len(fault_server.requests) == 2
    for body in fault_server.requests:
        content = body["messages"][-1]["content"]
        assert seen in content and "Lyon." in content
