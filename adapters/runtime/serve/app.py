"""The HTTP app: ``create_app(rewards, settings)`` builds a FastAPI app over a :class:`RewardService`.

Endpoints:

- ``POST /v1/score`` — ``{"reward", "completions", "columns", "deadline_s"?, "request_id"?}`` →
  ``{"scores", "reasons", "timings_s", "unscorable", "elapsed_s"}``;
- ``POST /get_reward`` (and ``/get_reward/{reward}``) — OpenRLHF's remote reward protocol;
- ``POST /verify`` — NeMo Gym's verify route: every served reward is a term of the sample's reward
  (:mod:`rewardsmith.adapters.protocols.nemo_gym`);
- ``GET /healthz``, ``GET /v1/rewards``, ``GET /metrics`` (Prometheus text);
- ``GET /monitor`` — the reward-hacking monitor's signals and alarms (with ``settings.monitor``, :mod:`.monitoring`).

Every error is ``{"error": "<one line>"}`` with a 4xx/5xx status, and the server keeps serving.
The factory is what a Ray Serve deployment wraps (``serve.ingress(create_app(...))``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError

from rewardsmith.adapters.components import component_columns, component_names
from rewardsmith.adapters.protocols import nemo_gym
from rewardsmith.adapters.runtime.serve.admission import QueueFull
from rewardsmith.adapters.runtime.serve.metrics import CONTENT_TYPE
from rewardsmith.adapters.runtime.serve.middleware import GuardMiddleware
from rewardsmith.adapters.runtime.serve.protocol import OpenRLHFRequest, OpenRLHFResponse, ScoreRequest, ScoreResponse
from rewardsmith.adapters.runtime.serve.scoring import BadRequest, openrlhf_batch, openrlhf_payload
from rewardsmith.adapters.runtime.serve.service import RewardService
from rewardsmith.adapters.runtime.serve.settings import ServeSettings
from rewardsmith.adapters.runtime.serve.specs import ServedReward
from rewardsmith.reward import Reward

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


def create_app(
    rewards: Mapping[str, Reward | ServedReward] | RewardService, settings: ServeSettings | None = None
) -> FastAPI:
    """A FastAPI app serving ``rewards`` (served name → reward) under ``settings``."""
    service = rewards if isinstance(rewards, RewardService) else RewardService(rewards, settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Sync rewards run in this pool (asyncio.to_thread), sized by the settings, not by the CPU count.
        executor = ThreadPoolExecutor(max_workers=service.settings.threads, thread_name_prefix="rewardsmith-score")
        asyncio.get_running_loop().set_default_executor(executor)
        # Before uvicorn listens (it awaits the lifespan first): nothing answers, not even /healthz, until every
        # served reward has started its pools, so "ready" means the first request is scored warm.
        await asyncio.to_thread(service.warm_up)
        yield

    app = FastAPI(title="rewardsmith reward server", lifespan=lifespan)
    app.state.service = service
    app.add_middleware(GuardMiddleware, service=service)

    @app.exception_handler(Exception)
    async def _internal(_: Request, exc: Exception) -> JSONResponse:
        logger.exception("request failed")
        return _error(500, f"internal error: {type(exc).__name__}: {exc}")

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        admission = service.admission
        body = {
            "status": "draining" if admission.draining else "ok",
            "rewards": list(service.rewards),
            "workers": admission.workers,
            "busy": admission.active,
            "queued": admission.queued,
            "max_queue": admission.max_queue,
        }
        if service.monitor is not None:
            body["alarm"] = service.monitor.alarm
        return JSONResponse(body, status_code=503 if admission.draining else 200)

    @app.get("/v1/rewards")
    async def list_rewards() -> dict[str, Any]:
        return {"rewards": service.describe()}

    @app.get("/metrics")
    async def metrics() -> Response:
        return Response(service.metrics.render(), media_type=CONTENT_TYPE)

    @app.get("/monitor")
    async def monitor() -> JSONResponse:
        if service.monitor is None:
            return _error(404, "the reward monitor is off; start the server with --monitor-shadow SPEC")
        return JSONResponse(service.monitor.describe())

    @app.post("/v1/score")
    async def score(request: Request) -> Response:
        arrived = time.monotonic()
        try:
            payload = await _parse(request, ScoreRequest)
            results, timings = await service.score(
                payload.reward, payload.completions, payload.columns, payload.deadline_s, arrived
            )
        except (BadRequest, QueueFull) as exc:
            return _refused(service, exc)
        answer = ScoreResponse(
            reward=payload.reward,
            scores=[r.score for r in results],
            reasons=[r.reason for r in results],
            timings_s=[round(t, 6) for t in timings],
            unscorable=sum(r.score is None for r in results),
            components=component_columns(component_names(service.served(payload.reward).reward), results),
            elapsed_s=round(time.monotonic() - arrived, 6),
            request_id=payload.request_id,
        )
        return _json(answer)

    async def openrlhf(request: Request, name: str | None) -> Response:
        arrived = time.monotonic()
        try:
            payload = await _parse(request, OpenRLHFRequest)
            served_name, served = service.openrlhf_reward(name)
            completions, columns, notes = openrlhf_batch(
                payload.query,
                payload.prompts,
                payload.labels,
                served.label_columns,
                service.settings.eos_markers,
                served.label_problem,
            )
            results, _ = await service.score(served_name, completions, columns, None, arrived)
        except (BadRequest, QueueFull) as exc:
            return _refused(service, exc)
        own = served.unscorable_score  # the term's own option, else the server's
        unscorable_score = own if own is not None else service.settings.unscorable_score
        components = component_names(served.reward)
        return _json(OpenRLHFResponse(**openrlhf_payload(results, notes, unscorable_score, components)))

    @app.post("/get_reward")
    async def get_reward(request: Request) -> Response:
        return await openrlhf(request, None)

    @app.post("/get_reward/{reward}")
    async def get_named_reward(request: Request, reward: str) -> Response:
        return await openrlhf(request, reward)

    @app.post("/verify")
    async def verify(request: Request) -> Response:
        arrived = time.monotonic()

        async def score_term(name: str, completions: list[Any], columns: dict[str, list[Any]]) -> list[Any]:
            return (await service.score(name, completions, columns, None, arrived))[0]

        terms = [(name, float(served.spec.get("weight", 1.0))) for name, served in service.rewards.items()]
        try:
            payload = await _parse(request, nemo_gym.VerifyRequest)
            answer = await nemo_gym.verify(payload, terms, score_term)
        except (BadRequest, QueueFull) as exc:
            return _refused(service, exc)
        except ValueError as exc:  # task fields the request cannot carry
            return _refused(service, BadRequest(str(exc)))
        return JSONResponse(answer)

    return app


async def _parse(request: Request, model: type[M]) -> M:
    body = await request.body()
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequest(f"body is not valid JSON: {exc}", status=400) from None
    except RecursionError:  # a body thousands of levels deep: the client's mistake, not the server's
        raise BadRequest("body is nested too deeply to read", status=400) from None
    except ValueError as exc:  # a number past Python's int-from-text digit limit
        raise BadRequest(f"body holds a number too long to read ({str(exc).split(':')[0]})", status=400) from None
    if not isinstance(data, dict):
        raise BadRequest(f"body must be a JSON object, got {type(data).__name__}", status=400)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or '<body>'}: {err['msg']}" for err in exc.errors()[:5])
        raise BadRequest(problems, status=422) from None


def _refused(service: RewardService, exc: Exception) -> JSONResponse:
    if isinstance(exc, QueueFull):
        service.metrics.rejected.labels("queue_full").inc()
        return _error(
            429, str(exc), {"retry-after": str(exc.retry_after_s)}, queued=exc.queued, max_queue=exc.max_queue
        )
    status = getattr(exc, "status", 422)
    service.metrics.rejected.labels(f"bad_request_{status}").inc()
    return _error(status, str(exc))


def _error(status: int, message: str, headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": " ".join(message.split()), **extra}, status_code=status, headers=headers)


def _json(body: BaseModel) -> Response:
    return Response(body.model_dump_json(), media_type="application/json")
