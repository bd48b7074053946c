"""Launcher of the embedded llama.cpp server that dies with the process that started it.

``python -m rewardsmith.judges.clients.embedded_child PARENT_PID -- <llama_cpp.server args>``. A parent killed with
SIGKILL cannot stop its children; this watchdog notices the parent is gone and ends the server, so a
crashed RLAIF run or audit never leaves a model server behind.

Besides llama-cpp-python's OpenAI routes the server answers ``POST /v1/rewardsmith/loglikelihood``: the
log-probability of given continuations after a chat prompt, which the OpenAI API cannot return (its
``echo`` log-probs need ``logits_all`` for every request and llama-cpp-python 0.3 reports them wrong).
The likelihood judge (:mod:`rewardsmith.judges.pointwise`) scores responses with it.

The route needs logits at the continuation's positions only, which llama-cpp-python's public API does not offer
without ``logits_all`` on every request, so it drives the 0.3 series' ``Llama._ctx``/``Llama._batch`` objects
(``kv_cache_seq_rm``, ``set_batch``, ``decode``, ``get_logits``). Those are private: the ``llama`` extra pins
``llama-cpp-python>=0.3.7,<0.4`` (the range it is tested with), and the server's start-up self-test sends one
log-likelihood request, so a release that changes them fails the self-test and the embedded judge falls back to
transformers instead of scoring wrongly.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from typing import Any, cast

from pydantic import BaseModel, Field

LOGLIKELIHOOD_PATH = "/v1/rewardsmith/loglikelihood"


class LoglikelihoodRequest(BaseModel):
    model: str | None = None
    messages: list[dict[str, str]]
    continuations: list[str] = Field(min_length=1)


def _watch(parent_pid: int, interval_s: float = 1.0) -> None:
    while True:
        time.sleep(interval_s)
        if os.getppid() != parent_pid:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            os._exit(1)


def chat_prompt(llama: Any, messages: list[dict[str, str]]) -> tuple[str, bool]:
    """The prompt llama-cpp-python's chat completion would evaluate for ``messages`` (its GGUF chat template),
    and whether a BOS token goes before it."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        raise ValueError("the model has no chat template (tokenizer.chat_template) to format the prompt with")
    formatter = getattr(llama, "_rewardsmith_formatter", None)
    if formatter is None:
        eos, bos = llama.token_eos(), llama.token_bos()
        formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
            bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
            stop_token_ids=[eos],
        )
        llama._rewardsmith_formatter = formatter
    # cast: plain role/content dicts are what llama-cpp-python's message TypedDicts describe
    result = formatter(messages=cast(Any, messages))
    return result.prompt, not result.added_special


def continuation_logprobs(llama: Any, messages: list[dict[str, str]], continuations: list[str]) -> dict[str, Any]:
    """Per continuation: the summed log-prob of its tokens after the chat prompt, and how many tokens it has.

    Reuses the KV cache of the shared prompt prefix (as llama-cpp-python's own completions do) and asks the
    model for logits only at the continuation's positions, so the model keeps ``logits_all=False``.
    """
    import numpy as np

    prompt_text, add_bos = chat_prompt(llama, messages)
    prompt_tokens = llama.tokenize(prompt_text.encode("utf-8"), add_bos=add_bos, special=True)
    n_vocab = llama.n_vocab()
    scores = []
    evaluated = 0
    for continuation in continuations:
        tokens = llama.tokenize((prompt_text + continuation).encode("utf-8"), add_bos=add_bos, special=True)
        start = 0  # the continuation begins where its tokens stop matching the prompt's
        while start < min(len(tokens), len(prompt_tokens)) and tokens[start] == prompt_tokens[start]:
            start += 1
        if start == 0 or start >= len(tokens):
            scores.append({"logprob": 0.0, "tokens": 0})
            continue
        if len(tokens) > llama.n_ctx():
            raise ValueError(f"prompt + continuation is {len(tokens)} tokens; the context holds {llama.n_ctx()}")
        kept = 0  # tokens already in the KV cache, up to the position whose logits predict the continuation
        for cached, wanted in zip(llama.input_ids[: llama.n_tokens], tokens[: start - 1], strict=False):
            if cached != wanted:
                break
            kept += 1
        llama._ctx.kv_cache_seq_rm(-1, kept, -1)
        llama.n_tokens = kept
        if kept < start - 1:
            llama.eval(tokens[kept : start - 1])
            evaluated += start - 1 - kept
        total = 0.0
        batch_size = llama.n_batch
        rest = tokens[start - 1 :]
        for offset in range(0, len(rest), batch_size):
            chunk = rest[offset : offset + batch_size]
            llama._batch.set_batch(batch=chunk, n_past=llama.n_tokens, logits_all=True)
            llama._ctx.decode(llama._batch)
            rows = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(len(chunk), n_vocab)).astype(np.float64)
            llama.input_ids[llama.n_tokens : llama.n_tokens + len(chunk)] = chunk
            llama.n_tokens += len(chunk)
            evaluated += len(chunk)
            targets = rest[offset + 1 : offset + 1 + len(chunk)]
            for row, target in zip(rows, targets, strict=False):
                peak = row.max()
                total += float(row[target] - peak - math.log(np.exp(row - peak).sum()))
        scores.append({"logprob": total, "tokens": len(tokens) - start})
        llama._requires_eval = True  # the context's logits are not a fresh prompt's: a cached prompt re-decodes
    return {"scores": scores, "prompt_tokens": len(prompt_tokens), "evaluated_tokens": evaluated}


def add_loglikelihood_route(app: Any) -> None:
    """``POST /v1/rewardsmith/loglikelihood`` ``{"messages": [...], "continuations": [...]}`` on a llama_cpp app."""
    from fastapi import Depends, HTTPException
    from llama_cpp.server.app import get_llama_proxy
    from starlette.concurrency import run_in_threadpool

    @app.post(LOGLIKELIHOOD_PATH)
    async def loglikelihood(body: LoglikelihoodRequest, llama_proxy: Any = Depends(get_llama_proxy)) -> dict:
        llama = llama_proxy(body.model)
        try:
            result = await run_in_threadpool(continuation_logprobs, llama, body.messages, body.continuations)
        except ValueError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from exc
        return {"model": body.model or "", **result}


def serve(server_args: list[str]) -> None:
    """Run llama-cpp-python's server (its own argument parser) with the log-likelihood route added."""
    import argparse

    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings, ServerSettings, Settings

    parser = argparse.ArgumentParser(prog="rewardsmith-embedded-llama-server")
    add_args_from_model(parser, Settings)
    args = parser.parse_args(server_args)
    # cast: llama-cpp-python annotates parse_model_from_args as returning the class it is given; it returns an instance
    server_settings = cast(ServerSettings, parse_model_from_args(ServerSettings, args))
    model_settings = cast(ModelSettings, parse_model_from_args(ModelSettings, args))
    app = create_app(server_settings=server_settings, model_settings=[model_settings])
    add_loglikelihood_route(app)
    uvicorn.run(app, host=server_settings.host, port=server_settings.port)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] != "--":
        raise SystemExit("usage: python -m rewardsmith.judges.clients.embedded_child PARENT_PID -- SERVER_ARGS...")
    parent_pid = int(argv[0])
    threading.Thread(target=_watch, args=(parent_pid,), daemon=True, name="parent-watchdog").start()
    serve(argv[2:])


if __name__ == "__main__":
    main(sys.argv[1:])
