"""Launchers for ``EmbeddedServer(launcher=...)`` whose server process really dies, as a miscompiled llama.cpp does.

``python tests/support/crashing_llama.py MODE PARENT_PID -- <llama_cpp.server args>``:

- ``real-crash-on-eval``: rewardsmith's real launcher (llama-cpp-python's server, the packaged model) whose first
  evaluation kills the process with SIGSEGV — what a ``GGML_NATIVE=ON`` build does on a CPU it was not built
  for: the model loads and ``/v1/models`` answers, the first real computation faults;
- ``crash-on-first-post``: a stdlib HTTP server that answers ``/v1/models`` and dies with SIGSEGV on the first
  POST (for machines without llama-cpp-python);
- ``answer``: a stdlib HTTP server that answers chat completions and log-likelihood requests with fixed values,
  until a test kills it (``os.kill(pid, SIGSEGV)``) to produce a crash in the middle of a run;
- ``cut-second-likelihood``: ``answer``, except that the second log-likelihood answer (the first after the
  start-up self-test) is cut mid-body: the server closes the connection and keeps serving.

The signal is delivered to the process itself, so the parent sees exactly what it sees for a segfault:
``returncode == -11``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _segfault() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)  # Python leaves SIGSEGV at its default action: the process dies


def _option(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def _stdlib_server(mode: str, args: list[str]) -> None:
    alias = _option(args, "--model_alias")
    likelihood_requests = [0]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            pass

        def _answer(self, payload: dict) -> None:
            body = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _cut(self, payload: dict) -> None:
            body = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._answer({"object": "list", "data": [{"id": alias, "object": "model"}]})
            else:
                self.send_error(404)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            if mode == "crash-on-first-post":
                sys.stderr.write("ggml_compute_forward: general protection fault\n")
                sys.stderr.flush()
                _segfault()
            if self.path == "/v1/chat/completions":
                choice = {"index": 0, "message": {"role": "assistant", "content": "A"}, "finish_reason": "stop"}
                usage = {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
                self._answer(
                    {"id": "x", "object": "chat.completion", "created": 0, "model": alias, "choices": [choice],
                     "usage": usage}
                )  # fmt: skip
            elif self.path == "/v1/rewardsmith/loglikelihood":
                scores = [{"logprob": -float(len(c)), "tokens": max(1, len(c))} for c in request["continuations"]]
                likelihood_requests[0] += 1
                if mode == "cut-second-likelihood" and likelihood_requests[0] == 2:
                    self._cut({"model": alias, "scores": scores})
                    return
                self._answer({"model": alias, "scores": scores, "prompt_tokens": 5, "evaluated_tokens": 5})
            else:
                self.send_error(404)

    server = ThreadingHTTPServer((_option(args, "--host"), int(_option(args, "--port"))), Handler)
    server.serve_forever()


def _real_server_crashing_on_eval(argv: list[str]) -> None:
    import llama_cpp

    def crash(*_: object, **__: object) -> None:
        _segfault()

    llama_cpp.Llama.eval = crash  # the first computation of any request (chat or log-likelihood) faults
    from rewardsmith.judges.clients import embedded_child

    embedded_child.main(argv)


def main(argv: list[str]) -> None:
    mode, rest = argv[0], argv[1:]
    if mode == "real-crash-on-eval":
        _real_server_crashing_on_eval(rest)
    elif mode in ("crash-on-first-post", "answer", "cut-second-likelihood"):
        _stdlib_server(mode, rest[rest.index("--") + 1 :])
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
