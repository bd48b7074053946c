"""Reward models: a scalar per (prompt, response) from a sequence classifier, locally or over HTTP.

- :class:`LocalRewardModel`: ``transformers`` ``AutoModelForSequenceClassification`` (one output, a Bradley–Terry
  reward model such as the ones ``rewardsmith train rm`` and TRL's ``RewardTrainer`` write). Each pair is rendered
  with the tokenizer's chat template (user prompt, assistant response) when it has one, batched with padding and
  truncated from the left (the end of a response is what a reward model must see); the score is the logit.
- :class:`RemoteRewardModel`: an OpenRLHF-style server. POST ``{"query": [prompt + response], "prompts": [...],
  "labels": [...]}`` to its ``/get_reward`` URL, read ``rewards`` (or ``scores``), one number per query.
- :class:`VLLMRewardModel`: a reward model served by vLLM's pooling API (``vllm serve MODEL --runner pooling``),
  ``POST /classify`` (``data[i].probs``) or ``POST /pooling`` (``data[i].data``). Each pair goes as chat
  ``messages``, which the server renders with the model's own chat template (one conversation per request, sent
  concurrently), or as plain ``input`` texts in one request; ``use_activation: false`` asks for the logit, not
  its sigmoid, so the scores equal the local model's. Field names follow vLLM 0.33.0
  (``vllm/entrypoints/pooling/{classify,pooling,base}/protocol.py``).

:func:`make_reward_model` picks the client: a local directory, or by URL (``…/classify`` and ``…/pooling`` are
vLLM, any other URL is OpenRLHF) unless ``protocol`` names one.

:class:`RewardModelPairwiseJudge` makes any of them a pairwise judge (``PairwiseJudgeProtocol``) with the
Bradley–Terry probability ``P(a better) = sigmoid(r_a - r_b)``, so a reward model goes through the same bias
audit as an LLM judge. A reward model has no presentation order, so both "orders" carry the same number and
``flipped`` is never set; its position bias is zero by construction, its length bias is what the audit measures.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, Protocol, cast, runtime_checkable

from rewardsmith import http
from rewardsmith.judges.base import JudgeError, OrderVerdict, PairwiseVerdict
from rewardsmith.judges.strategy import JudgeStrategy
from rewardsmith.judges.untrusted import defuse_control_tokens

Prompt = str | list[dict[str, Any]]
WireProtocol = Literal["auto", "openrlhf", "vllm-classify", "vllm-pooling"]
REMOTE_PROTOCOLS = ("openrlhf", "vllm-classify", "vllm-pooling")


@runtime_checkable
class RewardModelScorer(Protocol):
    """Scores (prompt, response) pairs; raises :class:`JudgeError` when the model or server fails."""

    model: str

    def score(
        self, prompts: Sequence[Prompt], responses: Sequence[str], labels: Sequence[Any] | None = None
    ) -> list[float]: ...


def as_messages(prompt: Prompt, response: str, special_tokens: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The conversation a chat-template reward model reads: the prompt's turns (or one user turn) + the response.

    The texts are untrusted: the chat template is rendered to one string and tokenised with special tokens
    recognised, so a ``<|im_start|>`` inside a response would open a real turn. Every content has its chat control
    tokens (and ``special_tokens``, the tokenizer's own) defused.
    """
    turns = list(prompt) if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
    turns = [_defused_turn(turn, special_tokens) for turn in turns]
    return [*turns, {"role": "assistant", "content": defuse_control_tokens(response, special_tokens)}]


def _defused_turn(turn: Any, special_tokens: Sequence[str]) -> Any:
    if isinstance(turn, dict) and isinstance(turn.get("content"), str):
        return {**turn, "content": defuse_control_tokens(turn["content"], special_tokens)}
    return turn


def plain_text(prompt: Prompt, special_tokens: Sequence[str] = ()) -> str:
    """The prompt as one text, control tokens defused (it is tokenised with special tokens recognised)."""
    if isinstance(prompt, str):
        return defuse_control_tokens(prompt, special_tokens)
    text = "\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, dict))
    return defuse_control_tokens(text, special_tokens)


def plain_pair(prompt: Prompt, response: str, special_tokens: Sequence[str] = ()) -> str:
    """Prompt, newline, response: the rendering without a chat template, control tokens defused."""
    return f"{plain_text(prompt, special_tokens)}\n{defuse_control_tokens(response, special_tokens)}"


def special_tokens_of(tokenizer: Any) -> list[str]:
    """A ``transformers`` tokenizer's special tokens (named and added), the strings it would read as control tokens."""
    tokens = [str(token) for token in getattr(tokenizer, "all_special_tokens", None) or []]
    added = getattr(tokenizer, "added_tokens_decoder", None) or {}
    tokens += [str(token.content) for token in added.values() if getattr(token, "special", False)]
    return sorted(set(tokens))


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
        specials = special_tokens_of(tokenizer)
        if self.use_chat_template and getattr(tokenizer, "chat_template", None):
            return [
                tokenizer.apply_chat_template(as_messages(p, r, specials), tokenize=False)
                for p, r in zip(prompts, responses, strict=True)
            ]
        return [plain_pair(p, r, specials) for p, r in zip(prompts, responses, strict=True)]

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
            "query": [p + defuse_control_tokens(r) for p, r in zip(texts, responses, strict=True)],
            "prompts": texts,
            "labels": list(labels) if labels is not None else [None] * len(texts),
        }

    def score(
        self, prompts: Sequence[Prompt], responses: Sequence[str], labels: Sequence[Any] | None = None
    ) -> list[float]:
        answer = post_json(
            self.url, self.payload(prompts, responses, labels),
            timeout=self.timeout, max_retries=self.max_retries, backoff=self.backoff,
        )  # fmt: skip
        return read_rewards(answer, len(responses), self.url)


def post_json(url: str, body: dict[str, Any], *, timeout: float, max_retries: int, backoff: float) -> Any:
    """POST ``body`` as JSON and return the decoded answer; :class:`JudgeError` once retries are spent.

    Connection errors, timeouts, 429, 5xx and bodies that are not JSON are retried with exponential backoff
    (``rewardsmith.http``'s rule, ``Retry-After`` honoured); another 4xx is the request's fault and is not. The
    reason carries the server's own error message.
    """
    policy = reward_server_policy(max_retries, backoff)
    try:
        return http.post_json(url, body, policy=policy, timeout=timeout)
    except http.HTTPFailure as failure:
        raise JudgeError(
            f"reward server {url}: {failure.cause} (gave up after {failure.attempts} attempts)"
        ) from failure


def reward_server_policy(max_retries: int, backoff: float) -> http.RetryPolicy:
    """429 and 5xx, refused, dropped and timed-out requests and non-JSON bodies are the server's: retried."""
    return http.RetryPolicy(max_retries=max_retries, backoff=backoff, retry_statuses=frozenset({429}))


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


class VLLMRewardModel:
    """A one-output classifier served by vLLM's pooling API: ``POST /classify`` or ``POST /pooling``.

    With ``use_chat_template`` each pair is one request of chat ``messages`` (vLLM takes one conversation per
    request) that the server renders with the model's chat template, as :class:`LocalRewardModel` does; without
    it one request carries every pair as ``input`` text (prompt, newline, response; no special tokens added),
    the local model's plain rendering. ``use_activation: false`` makes the server answer the logit.
    """

    def __init__(
        self,
        url: str,
        *,
        endpoint: Literal["classify", "pooling"] = "classify",
        served_model: str | None = None,
        use_chat_template: bool = True,
        timeout: float = 60.0,
        max_retries: int = 2,
        backoff: float = 0.5,
        concurrency: int = 8,
    ) -> None:
        self.url = url
        self.model = url
        self.endpoint = endpoint
        self.served_model = served_model
        self.use_chat_template = use_chat_template
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.concurrency = concurrency

    def requests(self, prompts: Sequence[Prompt], responses: Sequence[str]) -> list[dict[str, Any]]:
        """The request bodies for these pairs: one per pair (chat messages) or one for all (texts)."""
        base: dict[str, Any] = {"use_activation": False}
        if self.served_model:
            base["model"] = self.served_model
        pairs = list(zip(prompts, responses, strict=True))
        if self.use_chat_template:
            return [{**base, "messages": as_messages(p, r)} for p, r in pairs]
        return [{**base, "input": [plain_pair(p, r) for p, r in pairs], "add_special_tokens": False}]

    def score(
        self, prompts: Sequence[Prompt], responses: Sequence[str], labels: Sequence[Any] | None = None
    ) -> list[float]:
        """One logit per pair; any request that fails after retries fails the whole batch."""
        bodies = self.requests(prompts, responses)
        if not bodies or not responses:
            return []

        def send(body: dict[str, Any]) -> list[float]:
            answer = post_json(self.url, body, timeout=self.timeout, max_retries=self.max_retries, backoff=self.backoff)
            return read_vllm_scores(answer, 1 if "messages" in body else len(responses), self.endpoint, self.url)

        if len(bodies) == 1:
            return send(bodies[0])
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(bodies))) as pool:
            return [score for scores in pool.map(send, bodies) for score in scores]


def read_vllm_scores(answer: Any, n: int, endpoint: str, url: str = "") -> list[float]:
    """The scalar of each item of a vLLM pooling answer, in ``index`` order.

    ``/classify``: ``data[i].probs`` (one class: the reward); ``/pooling``: ``data[i].data``, one number for a
    sequence classifier. Several classes or per-token outputs are not a scalar reward and are refused.
    """
    items = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(items, list) or len(items) != n or not all(isinstance(it, dict) for it in items):
        raise JudgeError(f"reward server {url}: expected {n} results under 'data', got {str(answer)[:120]!r}")
    if sorted(i for it in items if isinstance(i := it.get("index"), int)) != list(range(n)):
        raise JudgeError(f"reward server {url}: result indices are not 0..{n - 1}")
    field = "probs" if endpoint == "classify" else "data"
    out = []
    for item in sorted(items, key=lambda it: it["index"]):
        values = item.get(field)
        if not isinstance(values, list) or len(values) != 1 or isinstance(values[0], list):
            shape = f"{len(values)} outputs" if isinstance(values, list) else repr(values)[:60]
            raise JudgeError(f"reward server {url}: '{field}' of a reward model is one number, got {shape}")
        value = values[0]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise JudgeError(f"reward server {url}: reward {value!r} is not a finite number")
        out.append(float(value))
    return out


def make_reward_model(path_or_url: str, *, protocol: WireProtocol = "auto", **options: Any) -> RewardModelScorer:
    """A remote scorer for an ``http(s)://`` URL (OpenRLHF or vLLM, see
    :func:`~rewardsmith.judges.clients.reward_models.remote_protocol`), else a local one:
    the client the reward-model plugin table holds under that name (:mod:`rewardsmith.judges.clients.reward_models`),
    given the options its line takes."""
    from rewardsmith.judges.clients.reward_models import open_reward_model

    return cast(RewardModelScorer, open_reward_model(path_or_url, protocol=protocol, **options))


class RewardModelPairwiseJudge(JudgeStrategy):
    """A reward model as a pairwise judge: ``prob_a = sigmoid((r_a - r_b) / temperature)``."""

    #: How verdicts are reached, recorded with an audit run's judge settings: a run of a reward model is never
    #: resumed by an LLM judge, nor the other way round.
    method = "reward_model"
    #: Each response is scored alone, so the presentation order cannot change a verdict: the audit reports its
    #: position bias as zero by construction and leaves it out of the bias tests.
    order_free = True

    def __init__(self, scorer: RewardModelScorer, *, temperature: float = 1.0) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.scorer = scorer
        self.temperature = temperature
        # One local forward pass at a time (the audit calls concurrently); a server takes concurrent requests.
        # (a managed client is looked through to the model it wraps)
        local = isinstance(getattr(scorer, "scorer", scorer), LocalRewardModel)
        self._lock = threading.Lock() if local else contextlib.nullcontext()

    @property
    def model(self) -> str:
        return f"reward-model:{self.scorer.model}"

    def judge_blocking(
        self, prompt: str, response_a: str, response_b: str, *, question: str | None = None
    ) -> PairwiseVerdict:
        """Blocking by nature (a forward pass, a sync HTTP request): ``ajudge`` runs it in a worker thread."""
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
