"""The in-process transport: a ``transformers`` causal LM (a model directory or a ``.gguf`` file) on this machine.

For users without a server: nothing to compile or start, the model is loaded on first use. Log-probs
come from the raw next-token logits of each generated position (top ``k`` alternatives), the same
shape the OpenAI API returns, so strategies treat both alike. Generation is serialised by a lock:
one model, one forward pass at a time; the async method runs it in a worker thread.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from rewardsmith.bridge import to_async
from rewardsmith.judges.base import (
    AsyncTransport,
    ChatClient,
    ChatParams,
    ChatResult,
    JudgeError,
    Message,
    TokenLogprob,
    Usage,
)
from rewardsmith.judges.clients.options import ClientOptions, Flag
from rewardsmith.transient import KeepsConfig

logger = logging.getLogger(__name__)


class TransformersChatClient(AsyncTransport, KeepsConfig):
    """Chat completions from a local model; ``model_path`` is a directory or a ``.gguf`` file."""

    def __init__(self, model_path: str | Path, *, model_name: str | None = None, device: str = "cpu") -> None:
        self.model_path = str(model_path)
        path = Path(self.model_path)
        self.model = model_name or (path.stem if path.suffix == ".gguf" else path.name)
        self.device = device
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TransformersChatClient(model_path={self.model_path!r})"

    _PICKLED = ("model_path", "model", "device")

    def _rebuild(self) -> None:
        self._loaded = None
        self._lock = threading.Lock()

    def load(self) -> tuple[Any, Any]:
        """Load (once) and return ``(tokenizer, model)``."""
        if self._loaded is None:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            path = Path(self.model_path)
            if not path.exists():
                raise JudgeError(f"model not found: {path}")
            kwargs: dict[str, Any] = {}
            directory = path
            if path.suffix == ".gguf":
                directory, kwargs = path.parent, {"gguf_file": path.name}
            started = time.perf_counter()
            tokenizer = AutoTokenizer.from_pretrained(directory, **kwargs)
            # Any: transformers types ``.to`` through a decorator that mypy reads as unbound
            model: Any = AutoModelForCausalLM.from_pretrained(directory, **kwargs)
            model = model.to(self.device).eval()
            logger.info("loaded %s in %.1fs", path, time.perf_counter() - started)
            self._loaded = (tokenizer, model)
        return self._loaded

    async def acomplete(self, messages: list[Message], params: ChatParams) -> ChatResult:
        """Generation blocks: it runs in a worker thread, one at a time (the model is not re-entrant)."""
        return await to_async(self._generate_locked, messages, params)

    def _generate_locked(self, messages: list[Message], params: ChatParams) -> ChatResult:
        with self._lock:
            try:
                return self._generate(messages, params)
            except JudgeError:
                raise
            except Exception as exc:  # a load or generation failure is an endpoint failure for callers
                raise JudgeError(f"{self.model}: {type(exc).__name__}: {exc}") from exc

    def _generate(self, messages: list[Message], params: ChatParams) -> ChatResult:
        import torch

        tokenizer, model = self.load()
        prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False).to(self.device)
        sampling = params.temperature > 0
        if sampling and params.seed is not None:
            torch.manual_seed(params.seed)
        generation: dict[str, Any] = {
            "max_new_tokens": params.max_tokens,
            "do_sample": sampling,
            "return_dict_in_generate": True,
            "output_logits": True,
            "pad_token_id": tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
        }
        if sampling:
            generation["temperature"] = params.temperature
        else:  # greedy: silence sampling defaults a model's generation_config may carry
            generation.update(temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            output = model.generate(**inputs, **generation)
        prompt_len = inputs["input_ids"].shape[1]
        new_ids = output.sequences[0, prompt_len:].tolist()
        eos = _eos_ids(tokenizer, model)
        finish = "length"
        if new_ids and new_ids[-1] in eos:
            new_ids, finish = new_ids[:-1], "stop"
        text = tokenizer.decode(new_ids, skip_special_tokens=True)
        text, stopped = _apply_stop(text, params.stop)
        if stopped:
            finish = "stop"
        logprobs = None
        if params.top_logprobs > 0:
            logprobs = []
            for position, token_id in enumerate(new_ids):
                log_softmax = torch.log_softmax(output.logits[position][0].float(), dim=-1)
                top = torch.topk(log_softmax, params.top_logprobs)
                logprobs.append(
                    TokenLogprob(
                        token=tokenizer.decode([token_id]),
                        logprob=float(log_softmax[token_id]),
                        top={
                            tokenizer.decode([int(i)]): float(v)
                            for v, i in zip(top.values.tolist(), top.indices.tolist(), strict=True)
                        },
                    )
                )
        return ChatResult(
            text=text,
            logprobs=logprobs,
            usage=Usage(prompt_tokens=prompt_len, completion_tokens=len(output.sequences[0]) - prompt_len),
            model=self.model,
            finish_reason=finish,
        )


class TransformersOptions(ClientOptions):
    """A local model directory or ``.gguf`` file, in-process (``base_url``, ``api_key`` and the request limits of
    an HTTP transport do not apply to it)."""

    model: Annotated[str, Flag("spec", "PATH")] = Field(description="a model directory or GGUF path")

    def transport(self) -> ChatClient:
        return TransformersChatClient(self.model)


def _eos_ids(tokenizer: Any, model: Any) -> set[int]:
    ids = model.generation_config.eos_token_id
    ids = set(ids) if isinstance(ids, (list, tuple)) else ({ids} if ids is not None else set())
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return ids


def _apply_stop(text: str, stops: tuple[str, ...]) -> tuple[str, bool]:
    cut = min((text.find(s) for s in stops if s and s in text), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)
