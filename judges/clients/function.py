"""A chat client whose answers come from a function: the test double for anything that takes a judge client.

httpx's ``MockTransport(handler)`` is the model: the code under test keeps its real path (strategies, the managed
client's cache and accounting, pipelines) and only the transport is swapped for ``handler(messages, params)``, which
answers with a :class:`~rewardsmith.judges.base.ChatResult` or just its text, or raises
:class:`~rewardsmith.judges.base.JudgeError` for an outage. Every request is kept in :attr:`FunctionClient.requests`,
so a test can assert what the judge was shown without a recording class of its own.

>>> from rewardsmith.judges.base import ChatParams
>>> client = FunctionClient(lambda messages, params: messages[-1].get("content", "").upper())
>>> client.complete([{"role": "user", "content": "a or b?"}], ChatParams()).text
'A OR B?'
>>> client.requests[0].text
'a or b?'
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from rewardsmith.judges.base import ChatParams, ChatResult, Message

Answer = ChatResult | str
Handler = Callable[[list[Message], ChatParams], Answer | Awaitable[Answer]]


@dataclass(frozen=True)
class Request:
    """One request as the client received it (messages copied, so later changes by the caller do not show)."""

    messages: list[Message]
    params: ChatParams

    @property
    def text(self) -> str:
        """Every message's content, one per line: what a test searches for a quoted completion."""
        return "\n".join(message["content"] for message in self.messages)


class FunctionClient:
    """A :class:`~rewardsmith.judges.base.ChatClient` answering with ``handler(messages, params)``.

    A sync handler serves both :meth:`complete` and :meth:`acomplete`; an ``async def`` handler serves
    :meth:`acomplete` only (the sync call refuses it rather than block on an event loop), as with httpx.
    """

    def __init__(self, handler: Handler, model: str = "function") -> None:
        self.handler = handler
        self.model = model
        self.requests: list[Request] = []

    def complete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        answer = self.handler(self._record(messages, params), params)
        if inspect.isawaitable(answer):
            if inspect.iscoroutine(answer):
                answer.close()
            raise TypeError("FunctionClient: an async handler answers acomplete() only; give complete() a sync one")
        return self._result(answer)

    async def acomplete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        answer = self.handler(self._record(messages, params), params)
        if inspect.isawaitable(answer):
            answer = await answer
        return self._result(answer)

    def _record(self, messages: list[Message], params: ChatParams) -> list[Message]:
        copied = [dict(message) for message in messages]
        self.requests.append(Request(copied, params))
        return [dict(message) for message in copied]

    def _result(self, answer: object) -> ChatResult:
        if isinstance(answer, ChatResult):
            return answer if answer.model else answer.model_copy(update={"model": self.model})
        if isinstance(answer, str):
            return ChatResult(text=answer, model=self.model, finish_reason="stop")
        raise TypeError(f"FunctionClient: the handler must answer a ChatResult or a str, not {type(answer).__name__}")
