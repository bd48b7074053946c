"""A real HTTP server on 127.0.0.1 whose answers follow a script, for the HTTP layer's fault tests.

Each request takes the next action of the script (``"ok"`` once the script is empty):

- ``"ok"``: 200 ``{"ok": true, "n": <requests so far>, "echo": <the JSON body>}``
- ``"503"``, ``"500"``, ``"400"``: that status with ``{"error": {"message": ...}}``
- ``"429:S"``: 429 with ``Retry-After: S``
- ``"drop"``: 200 headers announcing a body, half the body, then the connection closed
- ``"slow:S"``: sleep S seconds, then ``ok``
- ``"garbage"``: 200 with a body that is not JSON

Every request is recorded (method, path, body, client port), so a test asserts what the endpoint actually
received. ``down()`` closes the listening socket (connections are refused); ``up()`` listens on the same port again.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import ThreadingHTTPServer
from typing import Any

from tests.support.json_handler import QuietJSONHandler


class ScriptedEndpoint:
    def __init__(self) -> None:
        self.script: deque[str] = deque()
        self.received: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.port = 0
        self.up()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.received)

    def push(self, *actions: str) -> ScriptedEndpoint:
        with self._lock:
            self.script.extend(actions)
        return self

    def up(self) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedEndpoint:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.down()

    def _next(self, record: dict[str, Any]) -> tuple[str, int]:
        with self._lock:
            self.received.append(record)
            return (self.script.popleft() if self.script else "ok"), len(self.received)

    def _handler(self) -> type[QuietJSONHandler]:
        endpoint = self

        class Handler(QuietJSONHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                record = {"method": self.command, "path": self.path, "body": body, "port": self.client_address[1]}
                action, n = endpoint._next(record)
                try:
                    self._act(action, body, n)
                except OSError:  # the client gave up (a timeout) and closed its end
                    self.close_connection = True

            do_GET = do_POST = _serve

            def _act(self, action: str, body: Any, n: int) -> None:
                ok = json.dumps({"ok": True, "n": n, "echo": body}).encode()
                if action == "ok":
                    self._send(200, ok)
                elif action in ("400", "500", "503"):
                    error = {"error": {"message": f"scripted {action}"}}
                    self._send(int(action), json.dumps(error).encode())
                elif action.startswith("429:"):
                    error = {"error": {"message": "slow down"}}
                    self._send(429, json.dumps(error).encode(), {"Retry-After": action.removeprefix("429:")})
                elif action == "drop":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(ok)))
                    self.end_headers()
                    self.wfile.write(ok[: len(ok) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                elif action.startswith("slow:"):
                    time.sleep(float(action.removeprefix("slow:")))
                    self._send(200, ok)
                elif action == "garbage":
                    self._send(200, b"<html>not json at all")
                else:
                    raise ValueError(f"unknown action {action!r}")

        return Handler
