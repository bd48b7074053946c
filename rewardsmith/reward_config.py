"""A reward's configuration: one pydantic model per reward, validated once at construction.

Validation happens when the reward is built (a spec file read, a trainer script started), never in training: a
wrong field name or a ``nan`` weight stops the run with one line naming the field, instead of scoring with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError


class RewardConfig(BaseModel):
    """Base for every reward's config: unknown fields and non-finite numbers (``nan``, ``inf``) are
    configuration errors, not silently ignored or carried into every score."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ConfigError(ValueError):
    """Invalid reward configuration (unknown name, bad parameter). Raised at construction, never in training."""


ConfigT = TypeVar("ConfigT", bound=RewardConfig)


def build_config(
    model: type[RewardConfig],
    config: RewardConfig | Mapping[str, Any] | None,
    overrides: Mapping[str, Any],
    reward_name: str,
) -> RewardConfig:
    """Validate a reward config once, at construction, turning pydantic errors into readable ones."""
    if isinstance(config, model) and not overrides:
        return config
    data: dict[str, Any] = {}
    if isinstance(config, BaseModel):
        data.update(config.model_dump())
    elif isinstance(config, Mapping):
        data.update(config)
    elif config is not None:
        raise ConfigError(f"reward {reward_name!r}: config must be a mapping, got {type(config).__name__}")
    data.update(overrides)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<config>'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"reward {reward_name!r}: invalid config: {problems}") from None
