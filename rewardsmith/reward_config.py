"""A reward's configuration: one pydantic model per reward, validated once at construction.

Validation happens when the reward is built (a spec file read, a trainer script started), never in training: a
wrong field name or a ``nan`` weight stops the run with one line naming the field, instead of scoring with it.

**Settings grouped by stage.** A reward with many settings groups them as the stages of its pipeline, each group a
:class:`ConfigGroup` model held in one field of the config (``math_equivalence``: ``extract``, ``compare``,
``runtime`` ...), the way math-verify holds its extraction settings in one ``LatexExtractionConfig``. One rule, in
:class:`RewardConfig`, keeps every flat spelling working for every config: a key that is not a field of the config
but a setting of exactly one of its groups is moved into that group, so ``boxed="last"`` and
``extract={"boxed": "last"}`` build the same config (a key two groups declare must be written inside one; a key no
group declares is the usual unknown-field error). Reading works the same way: ``config.boxed`` is
``config.extract.boxed``. Code inside the package reads the grouped path, which the type checker sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator


class ConfigGroup(BaseModel):
    """One stage's settings inside a reward config (held in one field of it): the same rules as the config itself,
    unknown fields and non-finite numbers refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class RewardConfig(BaseModel):
    """Base for every reward's config: unknown fields and non-finite numbers (``nan``, ``inf``) are
    configuration errors, not silently ignored or carried into every score. A setting of one of its groups may be
    given flat (see the module doc)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _flat_keys_into_groups(cls, data: Any) -> Any:
        return cls.nested(data) if isinstance(data, Mapping) else data

    @classmethod
    def groups(cls) -> dict[str, type[ConfigGroup]]:
        """The config's groups: field name -> its :class:`ConfigGroup` model."""
        return _groups_of(cls)

    @classmethod
    def nested(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """``data`` with each flat key that is a setting of exactly one group moved into that group (a copy).

        Raises ``ValueError`` for a key two groups declare, and for a setting given both flat and in its group."""
        out = dict(data)
        owners_of = _owners_of(cls)
        for key in [k for k in out if isinstance(k, str) and k not in cls.model_fields and k in owners_of]:
            owners = owners_of[key]
            if len(owners) > 1:
                raise ValueError(
                    f"{key!r} is a setting of several groups ({', '.join(owners)}): write it inside one "
                    f"({owners[0]}: {{{key}: ...}})"
                )
            group = owners[0]
            inner = out.get(group) or {}
            if isinstance(inner, BaseModel):
                inner = inner.model_dump(exclude_unset=True)
            if not isinstance(inner, Mapping):
                continue  # the group's own value is wrong; its validation says so
            if key in inner:
                raise ValueError(f"{key!r} is given twice: flat and inside {group!r}")
            out[group] = {**inner, key: out.pop(key)}
        return out

    @classmethod
    def flat(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        """``data`` with each group's settings spread flat where the flat key would name them alone (a copy): the
        one spelling of given settings, whichever way they were written (a fingerprint of settings uses it)."""
        out: dict[str, Any] = {}
        owners_of = _owners_of(cls)
        for key, value in cls.nested(data).items():
            if key in cls.groups() and isinstance(value, Mapping):
                kept = {k: v for k, v in value.items() if owners_of.get(k) != (key,) or k in cls.model_fields}
                out.update({k: v for k, v in value.items() if k not in kept})
                if kept:
                    out[key] = kept
            else:
                out[key] = value
        return out

    if not TYPE_CHECKING:  # the type checker sees only declared fields: code in the package reads grouped paths

        def __getattr__(self, name: str) -> Any:
            """``config.boxed`` reads ``config.extract.boxed``: a flat name reads the one group that declares it."""
            try:
                return super().__getattr__(name)
            except AttributeError:
                owners = () if name.startswith("_") else _owners_of(type(self)).get(name, ())
                group = self.__dict__.get(owners[0]) if len(owners) == 1 else None
                if group is None:
                    raise
                return getattr(group, name)


@cache
def _groups_of(model: type[RewardConfig]) -> dict[str, type[ConfigGroup]]:
    return {
        name: info.annotation
        for name, info in model.model_fields.items()
        if isinstance(info.annotation, type) and issubclass(info.annotation, ConfigGroup)
    }


@cache
def _owners_of(model: type[RewardConfig]) -> dict[str, tuple[str, ...]]:
    """Each group setting's name -> the groups that declare it."""
    owners: dict[str, tuple[str, ...]] = {}
    for group, kind in _groups_of(model).items():
        for name in kind.model_fields:
            owners[name] = (*owners.get(name, ()), group)
    return owners


class ConfigError(ValueError):
    """Invalid reward configuration (unknown name, bad parameter). Raised at construction, never in training."""


ConfigT = TypeVar("ConfigT", bound=RewardConfig)


def build_config(
    model: type[RewardConfig],
    config: RewardConfig | Mapping[str, Any] | None,
    overrides: Mapping[str, Any],
    reward_name: str,
) -> RewardConfig:
    """Validate a reward config once, at construction, turning pydantic errors into readable ones. ``overrides``
    win over ``config`` setting by setting, also inside a group (``boxed="last"`` over a config's ``extract``)."""
    if isinstance(config, model) and not overrides:
        return config
    data: dict[str, Any] = {}
    if isinstance(config, BaseModel):
        data.update(config.model_dump())
    elif isinstance(config, Mapping):
        data.update(config)
    elif config is not None:
        raise ConfigError(f"reward {reward_name!r}: config must be a mapping, got {type(config).__name__}")
    try:
        data = model.nested(data)
        for key, value in model.nested(overrides).items():
            base = data.get(key)
            if key in model.groups() and isinstance(value, Mapping) and isinstance(base, (Mapping, BaseModel)):
                inner = base.model_dump(exclude_unset=True) if isinstance(base, BaseModel) else base
                value = {**inner, **value}
            data[key] = value
    except ValueError as exc:
        raise ConfigError(f"reward {reward_name!r}: invalid config: <config>: {exc}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<config>'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"reward {reward_name!r}: invalid config: {problems}") from None
