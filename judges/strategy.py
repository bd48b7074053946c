"""The base of every judging strategy: one verdict method, written once, with its sync and async faces.

A strategy (pairwise, scale, criteria, rank, group, ensemble, calibrated, likelihood, reward model) is called as
``judge(...)`` from plain code and ``await ajudge(...)`` from a loop. Two hand-written paths drift apart (one
catches a failure the other raises, one runs members in turn and the other together); so a strategy writes one of
them and this base derives the other, by one rule:

- a strategy that asks a chat client writes ``async def ajudge``; ``judge`` runs it through
  :func:`~rewardsmith.bridge.run_sync` (in or outside a running loop, from any thread, on the thread's kept loop,
  whose connections are closed with it: the strategy's :meth:`JudgeStrategy.loop_client`);
- a strategy whose work blocks by nature (a forward pass of a local model, a sync HTTP request) writes
  ``def judge_blocking``; ``judge`` calls it directly and ``ajudge`` awaits it in a worker thread
  (:func:`~rewardsmith.bridge.to_async`), so the loop keeps serving other requests meanwhile.

This is the transports' rule (:class:`~rewardsmith.judges.base.AsyncTransport`) one level up.

>>> class Echo(JudgeStrategy):
...     async def ajudge(self, prompt: str) -> str:
...         return prompt.upper()
>>> Echo().judge("a or b?")
'A OR B?'
"""

from __future__ import annotations

from typing import Any

from rewardsmith.bridge import run_sync, to_async


class JudgeStrategy:
    """Base of the judging strategies: subclasses write ``ajudge`` (async work) or ``judge_blocking`` (blocking work).

    ``judge`` itself is never written by a strategy: a class that defines it is refused when it is created.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "judge" in cls.__dict__:
            raise TypeError(
                f"{cls.__name__} defines judge(); a judge strategy writes ajudge (or judge_blocking for blocking "
                "work) and the base derives judge from it"
            )

    @classmethod
    def blocking(cls) -> bool:
        """Whether the strategy's work is blocking (it writes ``judge_blocking``) rather than async."""
        return cls.judge_blocking is not JudgeStrategy.judge_blocking

    def judge(self, *args: Any, **kwargs: Any) -> Any:
        """The verdict from sync code (plain code, worker threads, or inside a running loop); see :meth:`ajudge`."""
        if self.blocking():
            return self.judge_blocking(*args, **kwargs)
        return run_sync(self.ajudge(*args, **kwargs), close=self.loop_client())

    async def ajudge(self, *args: Any, **kwargs: Any) -> Any:
        """The verdict; a blocking strategy's work is awaited in a worker thread."""
        if self.blocking():
            return await to_async(self.judge_blocking, *args, **kwargs)
        raise NotImplementedError(f"{type(self).__name__} writes neither ajudge nor judge_blocking")

    def judge_blocking(self, *args: Any, **kwargs: Any) -> Any:
        """The verdict of a strategy whose work blocks (written instead of :meth:`ajudge`)."""
        raise NotImplementedError(f"{type(self).__name__} writes no judge_blocking")

    def loop_client(self) -> Any:
        """What holds connections on the loop a sync call runs on (closed with that loop): the chat client."""
        return getattr(self, "client", None)
