"""Is the embedded llama.cpp server really working? Its start-up self-test, and how a dead one is described.

A llama.cpp build compiled for another CPU (a default ``GGML_NATIVE=ON`` build that uses AVX-512/AMX the virtual
machine advertises but faults on) loads the model and answers ``/v1/models``, then dies with SIGSEGV or a
general-protection fault on the first real computation. Readiness therefore means one chat completion and one
log-likelihood request answered, not a listening port; and a server that died is named as a crash with its
signal and the rebuild that fixes it, never left to surface as "connection refused" on every later request.
"""

from __future__ import annotations

import math
import signal

from rewardsmith.http import HTTPFailure, RetryPolicy, post_json
from rewardsmith.judges.base import JudgeError

#: The install that builds llama.cpp for any x86-64 CPU, ignoring a wheel cached from a native build.
REBUILD_HINT = 'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir --force-reinstall "llama-cpp-python[server]"'

SELF_TEST_MESSAGES = [{"role": "user", "content": "Say OK."}]


class ServerUnusable(JudgeError):
    """The embedded llama.cpp server cannot judge (failed its self-test or died); the in-process path can."""


class ServerCrashed(ServerUnusable):
    """The embedded llama.cpp server process is gone; the message names how it ended and the fix."""


def describe_exit(returncode: int | None) -> str:
    """``-11`` -> ``killed by SIGSEGV (signal 11)``; ``1`` -> ``exited with status 1``."""
    if returncode is None:
        return "is gone (its exit status is unknown: another process started it)"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name} (signal {-returncode})"
    return f"exited with status {returncode}"


def crash_message(returncode: int | None, when: str, log_tail: str = "") -> str:
    """One message for a dead server: what died, when, how, the likely cause and the rebuild that fixes it."""
    how = describe_exit(returncode)
    message = f"the embedded llama.cpp server {how} {when}"
    if returncode is not None and returncode < 0 and -returncode in (signal.SIGSEGV, signal.SIGILL, signal.SIGBUS):
        message += (
            "; a llama.cpp build compiled for another CPU faults like this on its first computation. "
            f"Rebuild it portably: {REBUILD_HINT}"
        )
    else:
        message += f". If it crashes on every start, rebuild llama.cpp portably: {REBUILD_HINT}"
    tail = " | ".join(line.strip() for line in log_tail.strip().splitlines()[-3:] if line.strip())
    return f"{message} (server log: {tail[-300:]})" if tail else message


def self_test(base_url: str, model: str, *, timeout: float) -> None:
    """One greedy chat completion and one log-likelihood request; raises :class:`ServerUnusable` on any failure."""
    body = {"model": model, "messages": SELF_TEST_MESSAGES, "max_tokens": 2, "temperature": 0.0}
    try:
        payload = _post_json(f"{base_url}/chat/completions", body, timeout)
        if not payload.get("choices"):
            raise ServerUnusable(f"self-test chat completion answered no choices: {str(payload)[:200]}")
    except ValueError as exc:
        raise ServerUnusable(f"self-test chat completion failed: {type(exc).__name__}: {exc}") from exc
    from rewardsmith.judges.pointwise import request_loglikelihood

    try:
        scores = request_loglikelihood(
            base_url, SELF_TEST_MESSAGES, ["OK"], model=model, timeout=timeout, max_retries=0
        )
    except JudgeError as exc:
        raise ServerUnusable(f"self-test log-likelihood request failed: {type(exc).__name__}: {exc}") from exc
    score = scores.scores[0] if scores.scores else None
    if score is None or score.tokens < 1 or not math.isfinite(score.logprob):
        raise ServerUnusable(f"self-test log-likelihood request answered no usable score: {scores}")


def _post_json(url: str, body: dict, timeout: float) -> dict:
    """One try (the self-test judges the server as it is); a failure is a ``ValueError`` naming its cause."""
    try:
        payload = post_json(url, body, policy=RetryPolicy(max_retries=0), timeout=timeout)
    except HTTPFailure as failure:
        raise ValueError(failure.cause) from failure
    if not isinstance(payload, dict):
        raise ValueError(f"not a JSON object: {str(payload)[:200]}")
    return payload
