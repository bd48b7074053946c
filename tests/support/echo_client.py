"""A judge client kind as a third party would write one: a transport and its options model, in one module.

The echo transport answers every chat with its ``prefix`` and the last user message, counting words as tokens: a
real :class:`~rewardsmith.judges.base.ChatClient` that needs no model, so tests can add the kind to the judge client
table (or register it through the ``rewardsmith.judge_clients`` entry-point group) and watch the factory, YAML
configs and the command line pick it up. ``echo_transport`` is the older plugin shape: a bare callable whose
parameters name the common options it wants.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from pydantic import Field

from rewardsmith.judges.base import ChatClient, ChatParams, ChatResult, Message, Usage
from rewardsmith.judges.clients.options import ClientOptions, Flag


class EchoChatClient:
    """Answers ``prefix + last user message``; remembers the options it was built with."""

    def __init__(self, model: str, *, prefix: str = "", timeout: float = 60.0, base_url: str | None = None) -> None:
        self.model, self.prefix, self.timeout, self.base_url = model, prefix, timeout, base_url

    def complete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        asked = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        text = (self.prefix + asked)[: max(1, params.max_tokens) * 8]
        usage = Usage(prompt_tokens=len(asked.split()), completion_tokens=len(text.split()))
        return ChatResult(text=text, usage=usage, model=self.model, finish_reason="stop")

    async def acomplete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        await asyncio.sleep(0)
        return self.complete(messages, params)


class EchoOptions(ClientOptions):
    """The echo kind: a required name (``--judge echo:NAME``) and its own option, ``prefix`` (``--judge-prefix``)."""

    model: Annotated[str, Flag("spec", "NAME")] = Field(description="the name the echo answers under")
    prefix: Annotated[str, Flag("role")] = Field("", description="text put before every answer")

    def transport(self) -> ChatClient:
        return EchoChatClient(self.model, prefix=self.prefix, timeout=self.timeout, base_url=self.base_url)


def echo_transport(*, base_url: str | None = None, timeout: float = 60.0) -> EchoChatClient:
    """The bare-callable plugin shape: it receives the common options its parameters name."""
    return EchoChatClient("echo-fn", prefix="fn: ", timeout=timeout, base_url=base_url)
