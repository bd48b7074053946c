"""SkyRL: a ``skyrl-gym`` text environment whose ``step()`` returns a reward spec's per-step value.

SkyRL (``skyrl-gym`` 0.4) makes one environment per episode with ``skyrl_gym.make(name, env_config=...,
extras=row)``, calls ``init(prompt)`` and then ``step(action)`` once per model turn, and trains on each step's
``reward``. :class:`RewardsmithEnv` keeps the transcript and scores it with :func:`rewardsmith.steps.step_details`:
the value of the turn just taken, so per-turn terms (``per_turn``, ``tool_call_validity``) pay every turn and an
outcome term pays on the turn whose answer it judges. ``env_config``::

    spec: rewards.yaml        # or the spec itself as a mapping
    max_turns: 3              # the episode ends after this many turns ...
    stop_at: 1.0              # ... or as soon as a step earns at least this
    follow_up: "Check your answer and give it again as \\boxed{...}."   # the user message between turns

The row's ``reward_spec.ground_truth`` (SkyRL's dataset convention) fills the spec's one gold column, and the keys
of ``extra_info`` fill the others. SkyRL needs a number: an unscorable step scores ``unscorable_score`` (0.0 unless
set) and says so in the step's ``metadata`` (``unscorable``: the reason), so the two never look alike.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from rewardsmith.adapters.options import unscorable_as
from rewardsmith.adapters.spec import load_spec
from rewardsmith.reward import Reward
from rewardsmith.steps import step_details

ENV_ID = "rewardsmith"


class SkyrlEnvConfig(BaseModel):
    """``env_config`` of :class:`RewardsmithEnv` (SkyRL passes ``environment.skyrl_gym.<env>`` of its config)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str | dict[str, Any] | list[Any] = Field(description="reward spec file, or the spec as a mapping")
    max_turns: int = Field(1, ge=1)
    stop_at: float | None = Field(None, description="end the episode once a step earns at least this")
    follow_up: str | None = Field(None, description="user message after each turn that does not end the episode")
    unscorable_score: float | None = Field(None, description="the number an unscorable step gets (None: 0.0)")


@functools.lru_cache(maxsize=8)
def _spec_reward(key: str) -> Reward:
    """One reward per spec in a process: SkyRL makes an environment per episode, a reward's pools start once."""
    source = json.loads(key)
    return load_spec(Path(source) if isinstance(source, str) else source).combined()


class RewardsmithEnv(BaseTextEnv):
    """A text environment scored turn by turn with a rewardsmith reward spec."""

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        raw = _plain(env_config)
        self.config = SkyrlEnvConfig.model_validate(raw)
        self.max_turns = self.config.max_turns
        self.reward = _spec_reward(json.dumps(self.config.spec, sort_keys=True))
        self.columns = _columns(self.reward, dict(extras or {}))
        self.transcript: list[dict[str, Any]] = []

    def init(self, prompt: Any) -> tuple[Any, dict[str, Any]]:
        self.transcript = list(prompt) if isinstance(prompt, list) else [{"role": "user", "content": str(prompt)}]
        return prompt, {}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        self.transcript.append({"role": "assistant", "content": action})
        columns: dict[str, Any] = {k: [v] for k, v in self.columns.items()}
        result = step_details(self.reward, [self.transcript], credit="final", **columns)[0][-1]
        reward = unscorable_as(result.score, self.config.unscorable_score)
        stop = self.config.stop_at is not None and result.score is not None and result.score >= self.config.stop_at
        done = self.turns >= self.max_turns or stop
        observations = []
        if not done and self.config.follow_up:
            observations = [{"role": "user", "content": self.config.follow_up}]
            self.transcript.extend(observations)
        metadata: dict[str, Any] = {"reason": result.reason}
        if result.score is None:
            metadata["unscorable"] = result.reason
        return BaseTextEnvStepOutput(observations=observations, reward=reward, done=done, metadata=metadata)

    def get_metrics(self) -> dict[str, Any]:
        return {"steps": self.turns}


def _plain(env_config: Any) -> dict[str, Any]:
    """SkyRL hands its Hydra config section (an OmegaConf ``DictConfig``): plain containers for validation."""
    if env_config is None:
        return {}
    if type(env_config).__name__ == "DictConfig":
        from omegaconf import OmegaConf

        return dict(OmegaConf.to_container(env_config, resolve=True))  # type: ignore[arg-type]
    return dict(env_config)


def _columns(reward: Reward, extras: dict[str, Any]) -> dict[str, Any]:
    """The row's columns for the spec: ``extra_info``'s keys, and ``reward_spec.ground_truth`` in its gold column."""
    columns = dict(extras.get("extra_info") or {})
    spec = extras.get("reward_spec") or {}
    gold = tuple(reward.gold_columns)
    if isinstance(spec, Mapping) and "ground_truth" in spec:
        if len(gold) != 1:
            raise ValueError(
                "reward_spec.ground_truth fills the spec's one gold column, but the spec reads "
                f"{list(gold) or 'none'}: put the gold columns in extra_info under their names"
            )
        columns.setdefault(gold[0], spec["ground_truth"])
    return columns


def register(env_id: str = ENV_ID) -> None:
    """Make ``skyrl_gym.make(env_id, ...)`` build :class:`RewardsmithEnv` (call once before SkyRL builds envs)."""
    from skyrl_gym.envs.registration import register as skyrl_register
    from skyrl_gym.envs.registration import registry

    if env_id not in registry:
        skyrl_register(id=env_id, entry_point=f"{__name__}:RewardsmithEnv")
