"""How a reward server behaves: limits, deadline, auth and the OpenRLHF mapping, validated once at start."""

from __future__ import annotations

import os

from pydantic import ConfigDict, Field

from rewardsmith.adapters.options import UnscorableScore
from rewardsmith.monitor.config import MonitorConfig

#: End-of-turn markers a decoded OpenRLHF ``query`` may end with (it is decoded with special tokens kept).
DEFAULT_EOS_MARKERS = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<end_of_turn>",
    "<eos>",
    "</s>",
)


class ServeSettings(UnscorableScore):
    """Settings of one server process (or one Ray Serve replica).

    Capacity is two numbers: ``workers`` batches are scored at once and ``max_queue`` requests may wait for a
    slot; a request beyond that is answered 429 at once, so a flood never grows memory or latency without
    bound. Concurrent requests for one reward are coalesced into batches of up to ``max_batch`` samples, each
    waiting at most ``batch_wait_ms`` for company (so one-sample-per-request clients get batched throughput);
    inside a batch, samples are scored ``chunk_size`` at a time on ``threads`` scoring threads.

    The queue default fits the trainers' bursts: OpenRLHF 0.11 posts one request per sample, all of a rollout
    batch at once (``--rollout.batch_size`` 1024 prompts × ``n_samples_per_prompt``, 8 in a typical GRPO run),
    and retries a refusal only five times, one second apart; verl coalesces its calls into chunked requests.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    host: str = Field("127.0.0.1", description="address to bind")
    port: int = Field(8000, ge=0, le=65535, description="port to bind (0: any free port, printed at start)")
    workers: int = Field(4, ge=1, description="batches scored at the same time")
    max_queue: int = Field(8192, ge=0, description="requests waiting for a worker; beyond that: 429")
    max_batch: int = Field(256, ge=1, description="samples per coalesced batch (a larger request is one batch)")
    batch_wait_ms: float = Field(
        5.0, ge=0, le=1000, description="how long a batch waits for more requests before taking a free worker"
    )
    threads: int = Field(16, ge=1, description="threads that run synchronous reward code")
    chunk_size: int = Field(1, ge=1, description="samples per reward call (1: exact per-sample timings and deadline)")
    deadline_s: float = Field(120.0, gt=0, description="per-request deadline; later samples are None with a reason")
    abandon_after_s: float = Field(
        300.0, gt=0, description="after the deadline, how long overrunning work may hold its worker before cancelled"
    )
    max_body_bytes: int = Field(32 * 1024 * 1024, ge=1024, description="request body limit (413 beyond)")
    max_samples: int = Field(16384, ge=1, description="completions per request (413 beyond)")
    token_env: str | None = Field(None, description="environment variable holding the bearer token (None: open)")
    drain_timeout_s: float = Field(300.0, gt=0, description="on SIGTERM, how long in-flight requests may finish")
    openrlhf_reward: str | None = Field(None, description="reward behind POST /get_reward (default: the first)")
    # unscorable_score (from UnscorableScore): what /get_reward reports for an unscorable sample, unless the
    # reward's spec entry sets its own (OpenRLHF needs a number; the sample is flagged too)
    eos_markers: tuple[str, ...] = Field(DEFAULT_EOS_MARKERS, description="stripped from the end of an OpenRLHF query")
    log_level: str = Field("warning", description="uvicorn log level")
    monitor: MonitorConfig | None = Field(
        None, description="reward-hacking monitor (rewardsmith.monitor) over the scored samples; None: off"
    )
    monitor_rewards: tuple[str, ...] | None = Field(
        None, description="served rewards the monitor watches (None: every served reward)"
    )

    def token(self) -> str | None:
        """The bearer token from ``token_env``; a named but empty variable is a configuration error."""
        if not self.token_env:
            return None
        value = os.environ.get(self.token_env, "")
        if not value:
            raise ValueError(f"token_env {self.token_env!r} is not set (or empty); export it or drop --token-env")
        return value
