"""Ask the judge once before the work starts, so a dead endpoint or a refused key is one line, not a minute.

Without it, every item of an audit (or every pair of an RLAIF run) meets the same failure, each after its own
retries: 40 identical errors over a minute, and a report that has judged nothing. :func:`check_judge` sends one
cheap request (a one-token answer) through the judge's own transport — the same endpoint, key and model the
work will use, not the request cache (a cached answer proves nothing about the endpoint) — with at most one
retry, and raises :class:`JudgeUnavailable` naming the endpoint and the fix when it fails.

An endpoint that answers "too many requests" is alive and knows the key: the work paces and retries itself, so
a 429 passes. A judge without a chat client (a scripted judge, a local reward model already loaded) passes; a
remote reward model is asked to score one pair.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from rewardsmith.judges.base import ChatParams, JudgeError

logger = logging.getLogger(__name__)

#: The probe: the smallest request a chat endpoint answers like a real one.
PROBE_MESSAGES = [{"role": "user", "content": "Reply with the word OK."}]
PROBE_PARAMS = ChatParams(max_tokens=1, temperature=0.0)
#: Retries the probe makes at most (one absorbs a blip; more only delay the verdict on a dead endpoint).
PROBE_RETRIES = 1


class JudgeUnavailable(ValueError):
    """The judge's endpoint failed the one request sent before the work: nothing was judged.

    A ``ValueError``, like the configuration errors it usually is (a wrong URL, a missing key), so the command
    line prints it as one line and exits non-zero.
    """


def check_judge(judge: Any, role: str = "judge") -> None:
    """Send one cheap request through ``judge``'s transport; raise :class:`JudgeUnavailable` when it fails."""
    from rewardsmith.bridge import run_sync

    client = getattr(judge, "client", None)
    if client is not None and callable(getattr(client, "acomplete", None)):
        transport = getattr(client, "transport", client)
        run_sync(_probe_chat(transport, role), close=client)
        return
    scorer = getattr(judge, "scorer", None)
    if scorer is not None and isinstance(getattr(scorer, "url", None), str):
        _probe_scorer(scorer, role)


async def acheck_judge(judge: Any, role: str = "judge") -> None:
    """:func:`check_judge` from inside a running event loop (the audit runner's)."""
    client = getattr(judge, "client", None)
    if client is not None and callable(getattr(client, "acomplete", None)):
        await _probe_chat(getattr(client, "transport", client), role)
        return
    scorer = getattr(judge, "scorer", None)
    if scorer is not None and isinstance(getattr(scorer, "url", None), str):
        import asyncio

        await asyncio.to_thread(_probe_scorer, scorer, role)


async def _probe_chat(transport: Any, role: str) -> None:
    with _few_retries(transport):
        try:
            await transport.acomplete(PROBE_MESSAGES, PROBE_PARAMS)
        except JudgeError as exc:
            if _rate_limited(exc):
                logger.info("%s answered 429 to the check request; its retries will pace the work", role)
                return
            raise JudgeUnavailable(_message(role, transport, exc)) from None


def _probe_scorer(scorer: Any, role: str) -> None:
    with _few_retries(scorer):
        try:
            scorer.score(["Reply with the word OK."], ["OK"])
        except JudgeError as exc:
            raise JudgeUnavailable(_message(role, scorer, exc)) from None


@contextlib.contextmanager
def _few_retries(transport: Any) -> Iterator[None]:
    """At most :data:`PROBE_RETRIES` retries for the probe on a transport that reads ``max_retries`` per call.

    Only transports that read it at each retry are touched (the OpenAI transport, a remote reward model); one
    that copies it into a client it builds on first use (the embedded judge) keeps its own.
    """
    from rewardsmith.judges.clients.openai_compat import OpenAIChatClient
    from rewardsmith.judges.reward_model import RemoteRewardModel

    if not isinstance(transport, (OpenAIChatClient, RemoteRewardModel)):
        yield
        return
    saved = transport.max_retries
    transport.max_retries = min(saved, PROBE_RETRIES)
    try:
        yield
    finally:
        transport.max_retries = saved


def _rate_limited(exc: BaseException) -> bool:
    from rewardsmith.judges.clients.openai_compat import failure_of

    cause = exc.__cause__
    return isinstance(cause, Exception) and failure_of(cause)[:2] == ("status", 429)


def _message(role: str, transport: Any, exc: JudgeError) -> str:
    where = getattr(transport, "base_url", None) or getattr(transport, "url", None) or "api.openai.com"
    model = getattr(transport, "model", "?")
    if isinstance(getattr(transport, "url", None), str):  # a reward server: its URL is the whole address
        fix = "start the reward server there or pass its right URL (--reward-model URL)"
        return f"{role} reward server {where} failed its check request ({_cause(exc)}): {fix}"
    what = _cause(exc).removeprefix(f"{model} at {where}: ")
    return f"{role} {model!r} at {where} failed its check request ({what}): {_fix(exc, role)}"


def _cause(exc: JudgeError) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:300] + "..."


def _fix(exc: JudgeError, role: str) -> str:
    """What to do about the failure, by its kind (the cause the transport kept, else the message)."""
    from rewardsmith.judges.clients.openai_compat import failure_of

    cause = exc.__cause__
    kind, status = failure_of(cause)[:2] if isinstance(cause, Exception) else ("transport", None)
    text = str(exc)
    if status is None:
        for code in (401, 403, 404):
            if f"HTTP {code}" in text:
                status = code
    if status in (401, 403):
        return f"the endpoint refused the API key; set OPENAI_API_KEY or pass --{role}-api-key"
    if status == 404:
        return f"no such model or path there; check the model name and that --{role}-base-url ends in /v1"
    if kind in ("connect", "timeout") or "connection" in text.lower() or "refused" in text.lower():
        return f"nothing answers there; start the server or pass the right --{role}-base-url"
    return f"fix the endpoint (--{role}-base-url, --{role}-api-key) and rerun"
