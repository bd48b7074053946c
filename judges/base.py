"""The judge contracts: a chat client (one method) and the verdicts judging strategies return.

Clients are transports (httpx-style): OpenAI-compatible, in-process transformers, the embedded
llama.cpp server. Strategies (pairwise, scale, rank) never branch on which client they hold.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class ChatParams(BaseModel):
    """Sampling parameters; part of the cache key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = 0.0
    max_tokens: int = 16
    top_logprobs: int = Field(0, ge=0, le=20, description="alternatives per token; 0 = no log-probs")
    seed: int | None = 0
    stop: tuple[str, ...] = ()
    json_schema: str | None = Field(
        None, description="JSON Schema (as JSON text) the answer must follow; sent as the endpoint's response_format"
    )


class TokenLogprob(BaseModel):
    token: str
    logprob: float
    top: dict[str, float] = Field(default_factory=dict, description="alternative token -> log-prob")


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ChatResult(BaseModel):
    text: str
    logprobs: list[TokenLogprob] | None = None
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    cached: bool = False
    finish_reason: str | None = Field(None, description='"stop", or "length" when the answer was cut off')
    retries: int = Field(0, ge=0, description="requests the transport repeated before this answer (0 from the cache)")


Message = dict[str, str]


@runtime_checkable
class ChatClient(Protocol):
    """One chat completion. Raise :class:`JudgeError` (or a subclass) on failure after retries."""

    @property
    def model(self) -> str: ...  # read-only here: a plain attribute or a property both satisfy it

    def complete(self, messages: list[Message], params: ChatParams) -> ChatResult: ...

    async def acomplete(self, messages: list[Message], params: ChatParams) -> ChatResult: ...


class AsyncTransport:
    """Base of a judge client kind's transport, written once as its async call.

    A transport implements :meth:`acomplete` only; :meth:`complete`, the sync face, runs it through
    :func:`~rewardsmith.bridge.run_sync` (in or outside a running loop, from any thread, on the thread's kept loop,
    so an HTTP transport reuses its connections across sync calls). Blocking work (an in-process model) is awaited
    with :func:`~rewardsmith.bridge.to_async` inside ``acomplete``. Two hand-written paths drift apart (retries,
    fallbacks, crash checks); one cannot.
    """

    async def acomplete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        raise NotImplementedError(f"{type(self).__name__} implements no acomplete")

    def complete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        from rewardsmith.bridge import run_sync

        return run_sync(self.acomplete(messages, params), close=self)

    async def aclose(self) -> None:
        """Release what the running loop holds (connections); nothing by default."""
        return None


class JudgeError(RuntimeError):
    """The judge endpoint failed (after retries): an infrastructure failure, never a verdict.

    ``retries`` is how many times the transport repeated the request before giving up (for the accounting).
    """

    def __init__(self, *args: object, retries: int = 0) -> None:
        super().__init__(*args)
        self.retries = retries


class OrderVerdict(BaseModel):
    """One presentation order. ``prob_first`` = P(the response shown first is better)."""

    prob_first: float | None = Field(None, ge=0.0, le=1.0)
    choice: Literal["first", "second"] | None = None
    source: Literal["logprobs", "parsed", "abstain", "error"] = "abstain"
    raw: str = ""
    reason: str = ""


class PairwiseVerdict(BaseModel):
    """Both orders of one comparison, averaged. ``prob_a`` = P(response_a is better)."""

    prob_a: float | None = Field(None, ge=0.0, le=1.0)
    ab: OrderVerdict  # response_a shown first
    ba: OrderVerdict  # response_b shown first
    flipped: bool = Field(False, description="the two orders picked different responses (position-dependent)")
    abstained: bool = False
    reason: str = ""
    principle: str | None = None
    model: str = ""

    @property
    def winner(self) -> Literal["a", "b", "tie"] | None:
        if self.prob_a is None:
            return None
        if self.prob_a > 0.5:
            return "a"
        if self.prob_a < 0.5:
            return "b"
        return "tie"


@runtime_checkable
class PairwiseJudgeProtocol(Protocol):
    """What RLAIF pipelines and the bias audit need from a pairwise judge."""

    model: str

    def judge(
        self, prompt: str, response_a: str, response_b: str, *, question: str | None = None
    ) -> PairwiseVerdict: ...

    async def ajudge(
        self, prompt: str, response_a: str, response_b: str, *, question: str | None = None
    ) -> PairwiseVerdict: ...
