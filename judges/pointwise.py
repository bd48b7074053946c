"""Pointwise likelihood judging: each response scored on its own by how likely the judge model finds it.

A 135M chat model asked "A or B?" answers with the position: SmolLM2-135M puts 0.84-0.97 on whichever
response is shown first, so both orders flip on every pair and the averaged label is close to a coin. The
same model's *likelihood* of a response to the prompt carries what its instruction tuning learnt (a
correct fact, a polite refusal of a harmful request, an answer instead of a needless refusal) and has no
position at all. On the demo pairs it agrees with the marked-better response 16/18 times, where the
pairwise letter agrees 12/18 (bench/judge_accuracy.py); on the verified math/code/format audit sets
neither is better than chance, so it is a demo-grade judge, not a verifier.

``P(a better) = sigmoid((mean_a - mean_b) / temperature)`` with ``mean_x`` the mean log-prob per token of
response x after the chat prompt: the per-token probability ratio of the two responses, length-neutral.
Both :class:`~rewardsmith.judges.base.OrderVerdict` fields carry that one probability (no order exists),
so ``flipped`` is never set. The judge's question (a principle) is recorded, not shown to the model:
the likelihood is of the response to the user, the principle does not change it.

Log-likelihoods come from rewardsmith's embedded llama.cpp server (``/v1/rewardsmith/loglikelihood``) or
from an in-process ``transformers`` model; other OpenAI-compatible endpoints cannot return them.

>>> judge = LikelihoodJudge(make_client("embedded"))  # doctest: +SKIP
>>> judge.judge("What is the capital of Australia?", "Canberra.", "Sydney.").prob_a  # doctest: +SKIP
0.71
"""

from __future__ import annotations

import math
import threading
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from rewardsmith import http
from rewardsmith.bridge import to_async
from rewardsmith.judges.base import ChatClient, JudgeError, Message, OrderVerdict, PairwiseVerdict, Usage
from rewardsmith.judges.strategy import JudgeStrategy
from rewardsmith.judges.untrusted import defuse_control_tokens

LOGLIKELIHOOD_ROUTE = "/rewardsmith/loglikelihood"  # under the server's /v1 base URL
NEEDS_SCORER = "the likelihood judge needs rewardsmith's embedded llama.cpp server or an in-process transformers model"


class ContinuationScore(BaseModel):
    """The summed log-prob of a continuation's tokens after a prompt, and its token count."""

    logprob: float = Field(le=0.0)
    tokens: int = Field(ge=0)

    @property
    def mean(self) -> float | None:
        return self.logprob / self.tokens if self.tokens else None


class LikelihoodScores(BaseModel):
    scores: list[ContinuationScore]
    prompt_tokens: int = 0
    evaluated_tokens: int = Field(0, description="tokens the model actually ran (shared prefixes are reused)")


def pair_probability(a: ContinuationScore, b: ContinuationScore, temperature: float = 1.0) -> float | None:
    """``P(a better)`` from the two responses' mean log-prob per token; ``None`` if either is empty."""
    if a.mean is None or b.mean is None:
        return None
    z = (a.mean - b.mean) / temperature
    return 1.0 / (1.0 + math.exp(-max(min(z, 60.0), -60.0)))


# -- scorers: where the log-likelihoods come from -----------------------------------------------------


#: Refused, dropped and timed-out requests and 5xx answers are retried; a 429 or another 4xx is not (the server
#: runs one request at a time and queues the rest, it does not rate-limit), nor a body that is not JSON.
LIKELIHOOD_RETRIES = http.RetryPolicy(
    max_retries=4, backoff=0.5, max_backoff=8.0, retry_statuses=frozenset(),
    retry_on=frozenset({"connect", "timeout", "dropped"}),
)  # fmt: skip


def request_loglikelihood(
    base_url: str,
    messages: list[Message],
    continuations: list[str],
    *,
    model: str | None = None,
    timeout: float = 60.0,
    max_retries: int = 4,
) -> LikelihoodScores:
    """Ask a rewardsmith embedded llama.cpp server (``base_url`` ends in ``/v1``) to score ``continuations``.

    The server runs one request at a time, so a request queued behind a long generation can time out: timeouts,
    refused connections and 5xx answers are retried ``max_retries`` times with backoff, as chat requests are.
    The :class:`JudgeError` raised is caused by the :class:`rewardsmith.http.HTTPFailure` (its ``retryable``).
    """
    body = {"model": model, "messages": messages, "continuations": continuations}
    url = base_url.rstrip("/") + LOGLIKELIHOOD_ROUTE
    policy = LIKELIHOOD_RETRIES.model_copy(update={"max_retries": max_retries})
    try:
        payload = http.post_json(url, body, policy=policy, timeout=timeout)
    except http.HTTPFailure as failure:
        if failure.status in (404, 405):
            raise JudgeError(f"{base_url} does not score log-likelihoods: {NEEDS_SCORER}") from failure
        if failure.kind == "status":
            raise JudgeError(f"log-likelihood request failed: {failure.cause}") from failure
        if failure.kind == "malformed":
            raise JudgeError(
                f"{base_url} answered the log-likelihood request with invalid JSON: {failure.cause}"
            ) from failure
        raise JudgeError(f"log-likelihood request to {url} failed: {failure.cause}") from failure
    try:
        return LikelihoodScores.model_validate(payload)
    except ValidationError as exc:
        raise JudgeError(f"{base_url} does not score log-likelihoods (no scores answered): {NEEDS_SCORER}") from exc


class TransformersLikelihood:
    """Log-likelihoods from an in-process ``TransformersChatClient`` (its model, under its lock)."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self._lock = getattr(transport, "_lock", None) or threading.Lock()

    def loglikelihood(self, messages: list[Message], continuations: list[str]) -> LikelihoodScores:
        try:
            with self._lock:
                return self._score(messages, continuations)
        except JudgeError:
            raise
        except Exception as exc:  # a load or forward failure is an endpoint failure for callers
            raise JudgeError(f"{self.transport.model}: {type(exc).__name__}: {exc}") from exc

    def _score(self, messages: list[Message], continuations: list[str]) -> LikelihoodScores:
        import torch

        tokenizer, model = self.transport.load()
        prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        scores = []
        evaluated = 0
        for continuation in continuations:
            ids = tokenizer(prompt + continuation, add_special_tokens=False)["input_ids"]
            start = 0
            while start < min(len(ids), len(prompt_ids)) and ids[start] == prompt_ids[start]:
                start += 1
            if start == 0 or start >= len(ids):
                scores.append(ContinuationScore(logprob=0.0, tokens=0))
                continue
            with torch.inference_mode():
                logits = model(torch.tensor([ids], device=model.device)).logits[0, start - 1 : -1].float()
            logprobs = torch.log_softmax(logits, dim=-1)
            targets = torch.tensor(ids[start:], device=logprobs.device)
            total = float(logprobs.gather(1, targets[:, None]).sum())
            scores.append(ContinuationScore(logprob=min(total, 0.0), tokens=len(ids) - start))
            evaluated += len(ids)
        return LikelihoodScores(scores=scores, prompt_tokens=len(prompt_ids), evaluated_tokens=evaluated)


class _HTTPLikelihood:
    def __init__(self, base_url: str, model: str, timeout: float, max_retries: int) -> None:
        self.base_url, self.model, self.timeout, self.max_retries = base_url, model, timeout, max_retries

    def loglikelihood(self, messages: list[Message], continuations: list[str]) -> LikelihoodScores:
        return request_loglikelihood(
            self.base_url, messages, continuations, model=self.model, timeout=self.timeout,
            max_retries=self.max_retries,
        )  # fmt: skip


def likelihood_scorer(client: ChatClient) -> Any:
    """What scores log-likelihoods for ``client`` (a managed client is looked through to its transport)."""
    from rewardsmith.judges.clients.transformers_local import TransformersChatClient

    transport = getattr(client, "transport", client)
    if callable(getattr(transport, "loglikelihood", None)):
        return transport
    if isinstance(transport, TransformersChatClient):
        return TransformersLikelihood(transport)
    base_url = getattr(transport, "base_url", None)
    if base_url:  # an OpenAI-compatible endpoint: works when it is a rewardsmith embedded server
        timeout, retries = float(getattr(transport, "timeout", 60.0)), int(getattr(transport, "max_retries", 4))
        return _HTTPLikelihood(base_url, transport.model, timeout, retries)
    raise TypeError(
        f"{type(transport).__name__} cannot score log-likelihoods; the likelihood judge needs the embedded "
        "judge (make_client('embedded')) or a transformers model"
    )


# -- the judge ------------------------------------------------------------------------------------------


class LikelihoodJudge(JudgeStrategy):
    """Position-free pairwise judge from response log-likelihoods; implements ``PairwiseJudgeProtocol``.

    ``system`` is sent as the system message of the scored chat (``None``: the model's chat template default).
    """

    method = "likelihood"
    #: each response is scored alone, so the two orders cannot disagree: position bias is zero by construction
    order_free = True

    def __init__(
        self, client: ChatClient, *, system: str | None = None, temperature: float = 1.0, note: str | None = None
    ) -> None:
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.client = client
        self.system = system
        self.temperature = temperature
        self.note = note  # what a run prints about this judge's labels
        self.scorer = likelihood_scorer(client)

    @property
    def model(self) -> str:
        return self.client.model

    def __repr__(self) -> str:
        return f"LikelihoodJudge(model={self.model!r}, temperature={self.temperature})"

    def messages(self, prompt: str) -> list[Message]:
        """The scored chat: the prompt is one user message's content, its chat control tokens defused."""
        system = [{"role": "system", "content": self.system}] if self.system else []
        return [*system, {"role": "user", "content": defuse_control_tokens(prompt)}]

    def score(self, prompt: str, responses: list[str]) -> LikelihoodScores:
        """Log-likelihood of each response to ``prompt`` (one request; raises :class:`JudgeError`).

        The responses are appended to the rendered chat and tokenised with special tokens recognised, so each
        has its chat control tokens defused: ``<|im_end|>`` in a response is text, not the end of its turn.
        """
        continuations = [defuse_control_tokens(response) for response in responses]
        result = self.scorer.loglikelihood(self.messages(prompt), continuations)
        if len(result.scores) != len(responses):
            raise JudgeError(f"asked to score {len(responses)} responses, got {len(result.scores)} scores")
        accountant = getattr(self.client, "accountant", None)
        if accountant is not None:
            tokens = result.prompt_tokens + sum(s.tokens for s in result.scores)  # what the request carried
            accountant.record(self.model, Usage(prompt_tokens=tokens), cached=False)
        return result

    async def ascore(self, prompt: str, responses: list[str]) -> LikelihoodScores:
        return await to_async(self.score, prompt, responses)

    def judge_blocking(
        self, prompt: str, response_a: str, response_b: str, *, question: str | None = None
    ) -> PairwiseVerdict:
        """Blocking by nature: the scorer is a sync HTTP request or an in-process model (``ajudge`` runs it in a
        worker thread)."""
        try:
            result = self.score(prompt, [response_a, response_b])
        except JudgeError as exc:
            return self._failed(str(exc), question)
        return self.verdict(result, question)

    def verdict(self, result: LikelihoodScores, question: str | None) -> PairwiseVerdict:
        a, b = result.scores
        raw = f"mean log-prob per token: a {_fmt(a.mean)}, b {_fmt(b.mean)}"
        common = {"principle": question, "model": self.model, "flipped": False}
        prob_a = pair_probability(a, b, self.temperature)
        if prob_a is None:
            order = OrderVerdict(source="abstain", raw=raw, reason="a response has no tokens to score")
            return PairwiseVerdict(prob_a=None, ab=order, ba=order, abstained=True, reason="abstain (empty)", **common)
        choice_ab = "first" if prob_a > 0.5 else "second" if prob_a < 0.5 else None
        choice_ba = {"first": "second", "second": "first"}.get(choice_ab or "")
        ab = OrderVerdict(prob_first=prob_a, choice=choice_ab, source="logprobs", raw=raw)
        ba = OrderVerdict(prob_first=1.0 - prob_a, choice=choice_ba, source="logprobs", raw=raw)
        return PairwiseVerdict(prob_a=prob_a, ab=ab, ba=ba, reason="response log-likelihood (no position)", **common)

    def _failed(self, reason: str, question: str | None) -> PairwiseVerdict:
        order = OrderVerdict(source="error", reason=reason)
        return PairwiseVerdict(
            prob_a=None, ab=order, ba=order, abstained=True, reason=f"abstain ({reason})",
            principle=question, model=self.model,
        )  # fmt: skip


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
