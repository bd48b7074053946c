"""Reward models: a scalar per (prompt, response) from a sequence classifier, locally or over HTTP.

- :class:`LocalRewardModel`: ``transformers`` ``AutoModelForSequenceClassification`` (one output, a Bradley–Terry
  reward model such as the ones ``rewardkit train rm`` and TRL's ``RewardTrainer`` write). Each pair is rendered
  with the tokenizer's chat template (user prompt, assistant response) when it has one, batched with padding and
  truncated from the left (the end of a response is what a reward model must see); the score is the logit.
- :class:`RemoteRewardModel`: an OpenRLHF-style server. POST ``{"query": [prompt + response], "prompts": [...],
  "labels": [...]}`` to its ``/get_reward`` URL, read ``rewards`` (or ``scores``), one number per query.

:class:`RewardModelPairwiseJudge` makes either one a pairwise judge (``PairwiseJudgeProtocol``) with the
Bradley–Terry probability ``P(a better) = sigmoid(r_a - r_b)``, so a reward model goes through the same bias
audit as an LLM judge. A reward model has no presentation order, so both "orders" carry the same number and
``flipped`` is never set; its position bias is zero by construction, its length bias is what the audit measures.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from rewardkit.judges.base import JudgeError, OrderVerdict, PairwiseVerdict

Prompt = str | list[dict[str, Any]]


@runtime_checkable
class RewardModelScorer(Protocol):
    """Scores (prompt, response) pairs; raises :class:`JudgeError` when the model or server fails."""

    model: str

    def score(
        self, prompts: Sequence[Prompt], responses: Sequence[str], labels: Sequence[Any] | None = None
    ) -> list[float]: ...


def as_messages(prompt: Prompt, response: str) -> list[dict[str, Any]]:
    """The conversation a chat-template reward model reads: the prompt's turns (or one user turn) + the response."""
    turns = list(prompt) if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
    return [*turns, {"role": "assistant", "content": response}]


def plain_text(prompt: Prompt) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, dict))


class LocalRewardModel:
    """A local sequence-classification reward model; loaded on first use, one forward pass per batch."""

    def __init__(
        self,
        path: str,
        *,
        batch_size: int = 8,
        max_length: int = 1024,
        device: str = "cpu",
        use_chat_template: bool = True,
    ) -> None:
        self.path = str(path)
        self.model = self.path
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self.use_chat_template = use_chat_template
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in {"_loaded", "_lock"}}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._loaded = None
        self._lock = threading.Lock()

    def load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._loaded is None:
                from transformers import AutoModelForSequenceClassification, AutoTokenizer

                tokenizer = AutoTokenizer.from_pretrained(self.path)
                tokenizer.truncation_side = "left"
                if tokenizer.pad_token is None:
                    tokenizer.pad_token = tokenizer.eos_token
                model = AutoModelForSequenceClassification.from_pretrained(self.path).to(self.device).eval()
                if model.config.num_labels != 1:
                    raise JudgeError(
                        f"{self.path}: a reward model has one output, this one has {model.config.num_labels}"
                    )
                if model.config.pad_token_id is None:
                    model.config.pad_token_id = tokenizer.pad_token_id
                self._loaded = (tokenizer, model)
            return self._loaded

    def texts(self, prompts: Sequence[Prompt], responses: Sequence[str]) -> list[str]:
        tokenizer, _ = self.load()
        if self.use_chat_template and getattr(tokenizer, "chat_template", None):
            return [
                tokenizer.apply_chat_template(as_messages(p, r), tokenize=False)
                for p, r in zip(prompts, responses, strict=True)
            ]
        return [f"{plain_text(p)}\n{r}" for p, r in zip(prompts, responses, strict=True)]

    def score(
        self, prompts: Sequence[Prompt], responses: Sequence[str], labels: Sequence[Any] | None = None
    ) -> list[float]:
        import torch

        try:
            tokenizer, model = self.load()
            texts = self.texts(prompts, responses)
            out: list[float] = []
            for start in range(0, len(texts), self.batch_size):
                batch = tokenizer(
                    texts[start : start + self.batch_size], padding=True, truncation=True,
                    max_length=self.max_length, return_tensors="pt", add_special_tokens=False,
                ).to(self.device)  # fmt: skip
                with torch.no_grad():
                    logits = model(**batch).logits
                out.extend(float(x) for x in logits[:, 0].float().cpu())
            return out
        except JudgeError:
            raise
        except Exception as exc:  # a model that cannot load or run is an infrastructure failure, not a score
            raise JudgeError(f"reward model {self.path}: {type(exc).__name__}: {exc}") from exc


class RemoteRewardModel:
    """An OpenRLHF-style reward server: ``POST url {"query", "prompts", "labels"} -> {"rewards": [...]}``."""

    def __init__(self, url: str, *, timeout: float = 60.0, max_retries: int = 2, backoff: float = 0.5) -> None:
        self.url = url
        self.model = url
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff

    def payload(self, prompts: Sequence[Prompt], responses: Sequence[str], labels: Sequence[Any] | None) -> dict:
        texts = [plain_text(p) for p in prompts]
        return {
            "query": [p + r for p, r in zip(texts, responses, strict=True)],
            "prompts": texts,
            "labels": list(labels) if labels is not None else [None] * len(texts),
        }

    def score(
        self, prompts: Sequence[Prompt], responses: Sequence[str], labels: Sequence[Any] | None = None
    ) -> list[float]:
        body = json.dumps(self.payload(prompts, responses, labels)).encode("utf-8")
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    answer = json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}"
                if exc.code < 500 and exc.code != 429:
                    break
                continue
            except (OSError, ValueError) as exc:  # connection refused, timeout, a body that is not JSON
                last = f"{type(exc).__name__}: {exc}"
                continue
            return read_rewards(answer, len(responses), self.url)
        raise JudgeError(f"reward server {self.url}: {last} (gave up after {attempt + 1} attempts)")


def read_rewards(answer: Any, n: int, url: str = "") -> list[float]:
    """The numbers of a reward server's answer: ``rewards`` (OpenRLHF) or ``scores``, one finite float per query."""
    values = None
    if isinstance(answer, dict):
        values = answer.get("rewards", answer.get("scores"))
    if not isinstance(values, list) or len(values) != n:
        raise JudgeError(f"reward server {url}: expected {n} rewards under 'rewards', got {str(answer)[:120]!r}")
    out = []
    for value in values:
        if isinstance(value, list) and len(value) == 1:  # some servers answer [[r], [r]]
            value = value[0]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise JudgeError(f"reward server {url}: reward {value!r} is not a finite number")
        out.append(float(value))
    return out


def make_reward_model(path_or_url: str, **options: Any) -> RewardModelScorer:
    """A remote scorer for an ``http(s)://`` URL, else a local model directory."""
    if path_or_url.startswith(("http://", "https://")):
        return RemoteRewardModel(path_or_url, **{k: v for k, v in options.items() if k in {"timeout", "max_retries"}})
    keep = {"batch_size", "max_length", "device", "use_chat_template"}
    return LocalRewardModel(path_or_url, **{k: v for k, v in options.items() if k in keep})


class RewardModelPairwiseJudge:
    """A reward model as a pairwise judge: ``prob_a = sigmoid((r_a - r_b) / temperature)``."""

    def __init__(self, scorer: RewardModelScorer, *, temperature: float = 1.0) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.scorer = scorer
        self.temperature = temperature
        self._lock = threading.Lock()  # one forward pass at a time: the audit calls concurrently

    @property
    def model(self) -> str:
        return f"reward-model:{self.scorer.model}"

    def judge(self, prompt: str, response_a: str, response_b: str, *, question: str | None = None) -> PairwiseVerdict:
        try:
            with self._lock:
                r_a, r_b = self.scorer.score([prompt, prompt], [response_a, response_b])
        except JudgeError as exc:
            failed = OrderVerdict(source="error", reason=str(exc))
            return PairwiseVerdict(
                prob_a=None, ab=failed, ba=failed, abstained=True, reason=f"abstain ({exc})",
                principle=question, model=self.model,
            )  # fmt: skip
        return verdict_from_rewards(r_a, r_b, temperature=self.temperature, principle=question, model=self.model)

    async def ajudge(
        self, prompt: str, response_a: str, response_b: str, *, question: str | None = None
    ) -> PairwiseVerdict:
        return await asyncio.to_thread(self.judge, prompt, response_a, response_b, question=question)


def verdict_from_rewards(
    r_a: float, r_b: float, *, temperature: float = 1.0, principle: str | None = None, model: str = ""
) -> PairwiseVerdict:
    """Bradley–Terry: ``P(a better) = sigmoid((r_a - r_b) / temperature)``; the same in both presentation orders."""
    margin = (r_a - r_b) / temperature
    prob_a = 1.0 / (1.0 + math.exp(-margin)) if margin > -700 else 0.0
    choice_ab = "first" if prob_a > 0.5 else "second" if prob_a < 0.5 else None
    choice_ba = {"first": "second", "second": "first"}.get(choice_ab or "")
    raw = f"r_a={r_a:.4f} r_b={r_b:.4f}"
    ab = OrderVerdict(prob_first=prob_a, choice=choice_ab, source="logprobs", raw=raw)
    ba = OrderVerdict(prob_first=1.0 - prob_a, choice=choice_ba, source="logprobs", raw=raw)
    reason = f"reward model {raw}"
    return PairwiseVerdict(prob_a=prob_a, ab=ab, ba=ba, reason=reason, principle=principle, model=model)
