"""An OpenAI-compatible HTTP server on 127.0.0.1 that injects the faults a real server cannot be made to produce.

Each request pops the next action from a script; when the script is empty it answers normally.
Actions: ``"400"``, ``"400-logprobs"``, ``"429"``, ``"500"``, ``"timeout"`` (sleep past the client's
timeout), ``"malformed"`` (200 with a body that is not JSON), ``"cut"`` (a body shorter than its
Content-Length, then close),
``"answer:TEXT"`` (a valid completion with that text, after ``answer_delay_s``; ``finish_reason`` is
``length`` when TEXT ends with ``...``), ``"answer@P:TEXT"`` (the same, with the option and score tokens'
probability set to P instead of ``answer_prob``). ``push_when(needle, ...)`` scripts only the requests whose
last message contains ``needle`` (one presentation order of a pair, whatever the order requests arrive in).
``refuse_logprobs`` makes it answer every request that asks for log-probs with a 400 naming them.

With ``logprobs`` requested, the answer is split into word and punctuation tokens (``"Verdict: [[B]]"`` ->
``Verdict``, ``:``, `` [[``, ``B``, ``]]``) whose concatenation is the text; a token that is an option
letter gets that letter at P and the other letter at 1 - P as alternatives, and a token that is a score digit
1..9 gets that digit at P and the digit below it (2 for a 1) at 1 - P (``" 4"``: ``" 4"`` at P, ``" 3"``).
Every request body received, its arrival time and the peak number of requests in flight are recorded.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import deque
from http.server import ThreadingHTTPServer
from typing import Any

from tests.support.json_handler import QuietJSONHandler


class FaultServer:
    def __init__(self, default_answer: str = "A", answer_prob: float = 0.7, sleep_s: float = 3.0):
        self.default_answer = default_answer
        self.answer_prob = answer_prob  # log-probs: the answered option gets this, the other option the rest
        self.sleep_s = sleep_s
        self.answer_delay_s = 0.0
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0  # TCP connections accepted (a client that reuses its connections opens few)
        self.times: list[float] = []
        self.refuse_logprobs = False
        self.script: deque[str] = deque()
        self.routes: dict[str, deque[str]] = {}
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def push(self, *actions: str) -> None:
        with self._lock:
            self.script.extend(actions)

    def push_when(self, needle: str, *actions: str) -> None:
        """Script the requests whose last message contains ``needle`` (checked before the shared script)."""
        with self._lock:
            self.routes.setdefault(needle, deque()).extend(actions)

    def _next(self, body: dict[str, Any]) -> str:
        with self._lock:
            self.requests.append(body)
            self.times.append(time.monotonic())
            if self.refuse_logprobs and body.get("logprobs"):
                return "400-logprobs"
            messages = body.get("messages") or [{}]
            last = str(messages[-1].get("content", ""))
            for needle, actions in self.routes.items():
                if actions and needle in last:
                    return actions.popleft()
            return self.script.popleft() if self.script else f"answer:{self.default_answer}"

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def completion(self, text: str, body: dict[str, Any], answer_prob: float | None = None) -> dict[str, Any]:
        finish = "length" if text.endswith("...") else "stop"
        text = text.removesuffix("...")
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": finish,
        }
        if body.get("logprobs"):
            prob = self.answer_prob if answer_prob is None else answer_prob
            content = []
            for token in re.findall(r"\s*\w+|\s*[^\s\w]+|\s+", text):
                label = token.strip()
                alternative = {"A": "B", "B": "A", "1": "2"}.get(label)
                if alternative is None and len(label) == 1 and label in "23456789":
                    alternative = str(int(label) - 1)
                if alternative is not None:
                    other = token.replace(label, alternative)
                    top = {token: math.log(prob), **({other: math.log(1.0 - prob)} if prob < 1.0 else {})}
                else:
                    top = {token: math.log(0.9)}
                content.append(
                    {
                        "token": token,
                        "logprob": top[token],
                        "bytes": None,
                        "top_logprobs": [{"token": t, "logprob": lp, "bytes": None} for t, lp in top.items()],
                    }
                )
            choice["logprobs"] = {"content": content, "refusal": None}
        prompt_chars = sum(len(m.get("content", "")) for m in body.get("messages", []))
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fault"),
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_chars // 4,
                "completion_tokens": max(1, len(text) // 4),
                "total_tokens": 0,
            },
        }

    def _handler(self):
        server = self

        class Handler(QuietJSONHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without TCP_NODELAY a kept-alive connection waits out the
            # client's delayed ACK (~40 ms) on each answer, which a real server does not make it do.
            disable_nagle_algorithm = True

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server.connections += 1

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                action = server._next(body)
                server._enter()
                try:
                    self._act(action, body)
                except OSError:  # the client gave up (timeout) and closed the connection
                    self.close_connection = True
                finally:
                    server._leave()

            def _act(self, action: str, body: dict[str, Any]) -> None:
                if action == "429":
                    error = {"error": {"message": "rate limited", "type": "rate_limit"}}
                    self._send(429, json.dumps(error).encode(), {"Retry-After": "0.05"})
                elif action == "400-logprobs":
                    error = {"error": {"message": "logprobs are not supported", "type": "invalid_request"}}
                    self._send(400, json.dumps(error).encode())
                elif action == "400":
                    self._send(
                        400, json.dumps({"error": {"message": "bad request", "type": "invalid_request"}}).encode()
                    )
                elif action == "500":
                    self._send(500, json.dumps({"error": {"message": "boom", "type": "server_error"}}).encode())
                elif action == "timeout":
                    time.sleep(server.sleep_s)
                    self._send(200, json.dumps(server.completion(server.default_answer, body)).encode())
                elif action == "malformed":
                    self._send(200, b"<html>this is not json")
                elif action == "cut":
                    payload = json.dumps(server.completion(server.default_answer, body)).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload[: len(payload) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                elif action.startswith("answer:"):
                    time.sleep(server.answer_delay_s)
                    self._send(200, json.dumps(server.completion(action.removeprefix("answer:"), body)).encode())
                elif action.startswith("answer@"):
                    prob, text = action.removeprefix("answer@").split(":", 1)
                    time.sleep(server.answer_delay_s)
                    self._send(200, json.dumps(server.completion(text, body, float(prob))).encode())
                else:
                    raise ValueError(f"unknown fault action {action!r}")

        return Handler
