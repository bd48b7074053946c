"""vLLM's pooling API (``POST /classify``, ``POST /pooling``) served on 127.0.0.1 by a real FastAPI/uvicorn server that
scores with a local one-output sequence classifier.

vLLM itself cannot run here (it needs a GPU build and cannot be installed offline), so this server reproduces its
wire format as vLLM 0.33.0 defines it: ``vllm/entrypoints/pooling/base/protocol.py`` (``input`` with
``add_special_tokens`` default true, or one conversation of chat ``messages`` with ``add_special_tokens`` default
false and ``add_generation_prompt`` default false; ``use_activation``; ``normalize`` refused), ``classify/protocol.py``
(``ClassificationResponse``: ``data[i] = {index, label, probs, num_classes}``), ``pooling/protocol.py``
(``PoolingResponse``: ``data[i] = {index, object: "pooling", data}``), ``serve/engine/protocol.py`` (``UsageInfo``,
``ErrorResponse``: ``{"error": {message, type, param, code}}``), and the classify activation of
``model_executor/layers/pooler/activations.py`` (one label: sigmoid, unless ``use_activation`` is false). The chat
template is applied here, server side, with the model's own tokenizer, as vLLM's renderer does.

``faults`` are answered first, one per request: ``"500"``, ``"400"``, ``"two-classes"`` (two probabilities),
``"short"`` (one item too few), ``"not-json"`` (200 with an HTML body).
"""

from __future__ import annotations

import math
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from fastapi import Request  # module level: FastAPI resolves the handlers' annotations here


class VLLMPoolingServer:
    def __init__(self, model_dir: str | Path, served_name: str = "tiny-rm") -> None:
        import torch
        import uvicorn
        from fastapi import FastAPI
        from fastapi.responses import HTMLResponse, JSONResponse
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.served_name = served_name
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.faults: list[str] = []
        self._lock = threading.Lock()
        server = self
        app = FastAPI()

        def error(status: int, message: str, kind: str = "BadRequestError") -> JSONResponse:
            body = {"error": {"message": message, "type": kind, "param": None, "code": status}}
            return JSONResponse(body, status_code=status)

        def logits(texts: list[str], add_special_tokens: bool) -> list[float]:
            out = []
            for text in texts:  # one sequence at a time: vLLM does not pad
                ids = server.tokenizer(text, return_tensors="pt", add_special_tokens=add_special_tokens)
                with torch.no_grad():
                    out.append(float(server.model(**ids).logits[0, 0]))
            return out

        async def handle(request: Request, endpoint: str) -> Any:
            body = await request.json()
            with server._lock:
                server.bodies.append(body)
                server.paths.append(endpoint)
                fault = server.faults.pop(0) if server.faults else None
            if fault == "500":
                return error(500, "EngineCore encountered an issue.", "InternalServerError")
            if fault == "400":
                return error(400, "This model's maximum context length is 32 tokens.")
            if fault == "not-json":
                return HTMLResponse("<html>bad gateway</html>")
            if "normalize" in body:
                return error(400, "Parameter `normalize` was removed; use `use_activation` instead.")
            if body.get("model") not in (None, server.served_name):
                return error(404, f"The model `{body['model']}` does not exist.", "NotFoundError")
            if "messages" in body:
                text = server.tokenizer.apply_chat_template(
                    body["messages"], tokenize=False, add_generation_prompt=body.get("add_generation_prompt", False)
                )
                texts, special = [text], body.get("add_special_tokens", False)
            elif "input" in body:
                texts = [body["input"]] if isinstance(body["input"], str) else list(body["input"])
                special = body.get("add_special_tokens", True)
            else:
                return error(400, "Field required: input or messages")
            raw = logits(texts, special)
            activate = body.get("use_activation")
            values = [r if activate is False else 1.0 / (1.0 + math.exp(-r)) for r in raw]  # one label: sigmoid
            values = [[v, 1.0 - v] if fault == "two-classes" else [v] for v in values]
            if fault == "short":
                values = values[:-1]
            tokens = sum(len(server.tokenizer(t, add_special_tokens=special)["input_ids"]) for t in texts)
            usage = {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0}
            usage |= {"prompt_tokens_details": None, "completion_tokens_details": None}
            created = int(time.time())
            if endpoint == "classify":
                data = [
                    {"index": i, "label": "LABEL_0", "probs": v, "num_classes": len(v)} for i, v in enumerate(values)
                ]
                prefix = "classify"
            else:
                data = [{"index": i, "object": "pooling", "data": v} for i, v in enumerate(values)]
                prefix = "pool"
            return JSONResponse(
                {
                    "id": f"{prefix}-{uuid.uuid4().hex}",
                    "object": "list",
                    "created": created,
                    "model": server.served_name,
                    "data": data,
                    "usage": usage,
                }
            )

        @app.post("/classify")
        async def classify(request: Request) -> Any:
            return await handle(request, "classify")

        @app.post("/pooling")
        async def pooling(request: Request) -> Any:
            return await handle(request, "pooling")

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the vLLM-format test server did not start")
            time.sleep(0.02)

    def __enter__(self) -> VLLMPoolingServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
