"""Which transport really judged, for run records (``run.json``): not the one configured, the one that answered.

The embedded judge can start on its llama.cpp server and finish in-process after the server crashed
(:class:`~rewardsmith.judges.clients.embedded.EmbeddedServerClient`); a record that names only the model asked
for would hide that. :func:`judged_by` walks a judge to its transport (``judge.client.transport``) and asks it;
a transport that never changes is described by its kind and model.
"""

from __future__ import annotations

from typing import Any

#: What a plain transport is called in a record, by class name (others are named by their class).
TRANSPORT_KINDS = {
    "OpenAIChatClient": "OpenAI-compatible HTTP",
    "TransformersChatClient": "in-process transformers",
}


def transport_of(judge_or_client: Any) -> Any:
    """The innermost transport under a judge or client (``.client`` then ``.transport``, as deep as they go)."""
    node = judge_or_client
    for _ in range(8):  # a judge -> managed client -> transport chain is three deep; a cycle must not hang
        if hasattr(node, "judged_by"):
            return node
        inner = getattr(node, "client", None) or getattr(node, "transport", None)
        if inner is None or not hasattr(inner, "model"):  # e.g. an HTTP library's client, or a method
            return node
        node = inner
    return node


def judged_by(judge_or_client: Any) -> dict[str, Any]:
    """``{"transport", "model", "fallback", "fallback_reason", "switched_midway", ...}``: the transport that judged."""
    transport = transport_of(judge_or_client)
    describe = getattr(transport, "judged_by", None)
    if callable(describe):
        return dict(describe())
    name = type(transport).__name__
    return {
        "transport": TRANSPORT_KINDS.get(name, name),
        "model": getattr(transport, "model", getattr(judge_or_client, "model", None)),
        "fallback": False,
        "fallback_reason": None,
        "switched_midway": False,
    }
