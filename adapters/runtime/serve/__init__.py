"""``rewardsmith serve``: rewards over HTTP, natively (``/v1/score``) and in OpenRLHF's protocol (``/get_reward``).

Layers, each usable on its own (a Ray Serve deployment reuses all but the runner):

- :mod:`.specs` — which rewards to serve, from the YAML specs the registry reads;
- :mod:`.scoring` — pure scoring of one request (contract, chunks, deadline) and OpenRLHF's mapping;
- :mod:`.admission` / :mod:`.metrics` — bounded queue and drain; Prometheus metrics;
- :mod:`.service` — the two above around scoring: ``RewardService.score``;
- :mod:`.app` — ``create_app(rewards, settings)``: the FastAPI app;
- :mod:`.runner` — uvicorn with drain on SIGTERM.
"""

from rewardsmith.adapters.runtime.serve.app import create_app
from rewardsmith.adapters.runtime.serve.scoring import BadRequest, ScoringJob, openrlhf_batch, prepare, score
from rewardsmith.adapters.runtime.serve.service import RewardService
from rewardsmith.adapters.runtime.serve.settings import ServeSettings
from rewardsmith.adapters.runtime.serve.specs import ServedReward, build_served, load_served

__all__ = [
    "BadRequest",
    "RewardService",
    "ScoringJob",
    "ServeSettings",
    "ServedReward",
    "build_served",
    "create_app",
    "load_served",
    "openrlhf_batch",
    "prepare",
    "score",
]
