"""TRL adapter: reward specs to ``GRPOTrainer`` arguments, RLAIF pairs to ``DPOTrainer`` datasets.

GRPO::

    funcs, weights = grpo_rewards("rewards.yaml")          # or a dict / list of terms
    args = GRPOConfig(..., reward_weights=weights)
    GRPOTrainer(model=path, reward_funcs=funcs, args=args, train_dataset=ds)

Each term stays a separate function, so TRL logs each one (``rewards/<name>/mean``) and does the weighted
sum itself (``None`` → NaN, ignored; all-``None`` → advantage 0). The terms are the components TRL's
``multi_objective_aggregation="normalize_then_sum"`` (GDPO) normalises one by one::

    args = GRPOConfig(..., **grpo_config_kwargs("rewards.yaml", "normalize_then_sum"))

DPO: :func:`dpo_dataset` takes rows (or a ``datasets.Dataset``, or a jsonl path) with ``prompt``,
``chosen``, ``rejected`` and any provenance columns (judge, principle, scores, ...), and returns a
``Dataset`` in TRL's plain or conversational preference format.

Tool environments for ``GRPOTrainer(environment_factory=...)``: :class:`PythonSandboxEnvironment` and
:class:`ShellSandboxEnvironment` (from :mod:`rewardsmith.adapters.trainers.environments`), importable from here
too and loaded on first use, so importing this module does not import the sandbox stack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from rewardsmith.adapters.spec import RewardSpec, load_spec
from rewardsmith.types import completion_text, prompt_text

PREFERENCE_COLUMNS = ("prompt", "chosen", "rejected")

Format = Literal["keep", "plain", "conversational"]

#: TRL's ``GRPOConfig.multi_objective_aggregation`` values (TRL >= 1.16).
MultiObjective = Literal["sum_then_normalize", "normalize_then_sum"]
MULTI_OBJECTIVE: tuple[str, ...] = ("sum_then_normalize", "normalize_then_sum")

#: Names served lazily from :mod:`rewardsmith.adapters.trainers.environments`.
ENVIRONMENTS = ("PythonSandboxEnvironment", "ShellSandboxEnvironment")


def __getattr__(name: str) -> Any:
    if name in ENVIRONMENTS:
        from rewardsmith.adapters.trainers import environments

        return getattr(environments, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def grpo_rewards(spec: RewardSpec | Mapping[str, Any] | list[Any] | str | Path) -> tuple[list[Any], list[float]]:
    """``(reward_funcs, reward_weights)`` for ``GRPOTrainer`` / ``GRPOConfig`` from a reward spec."""
    spec = load_spec(spec)
    return spec.reward_funcs(), spec.reward_weights()


def grpo_config_kwargs(
    spec: RewardSpec | Mapping[str, Any] | list[Any] | str | Path,
    aggregation: MultiObjective | None = None,
) -> dict[str, Any]:
    """The ``GRPOConfig`` keyword arguments a spec determines: ``reward_weights``, and with ``aggregation`` TRL's
    ``multi_objective_aggregation`` (``normalize_then_sum``: each term normalised within its group before the
    weighted sum, GDPO; ``sum_then_normalize``: TRL's default).

    Each term is one of :func:`grpo_rewards`' functions, so each is one component: a gated term's value is its gated
    score, a route term's the score of the route each sample took (:mod:`rewardsmith.adapters.components`).

    >>> grpo_config_kwargs(["think_format", {"name": "tag_count", "weight": 0.5}], "normalize_then_sum")
    {'reward_weights': [1.0, 0.5], 'multi_objective_aggregation': 'normalize_then_sum'}
    """
    kwargs: dict[str, Any] = {"reward_weights": load_spec(spec).reward_weights()}
    if aggregation is not None:
        if aggregation not in MULTI_OBJECTIVE:
            raise ValueError(f"aggregation must be one of {', '.join(MULTI_OBJECTIVE)}; got {aggregation!r}")
        kwargs["multi_objective_aggregation"] = aggregation
    return kwargs


def dpo_dataset(
    source: Any,
    *,
    format: Format = "keep",
    keep_provenance: bool = False,
    system_prompt: str | None = None,
) -> Any:
    """A TRL preference ``Dataset`` from RLAIF output rows.

    Args:
        source: a ``datasets.Dataset``, an iterable of row dicts, or a path to a jsonl/json/csv/parquet file.
        format: ``keep`` leaves each field as it is; ``plain`` makes every field a string (the last user turn
            for the prompt, the assistant text for answers); ``conversational`` makes the prompt a message
            list (with ``system_prompt`` first, if given) and the answers one assistant message each.
        keep_provenance: keep the other columns (judge, principle, margins...). TRL ignores unknown
            columns, so keeping them is safe; dropping them makes the dataset lighter.

    Rows whose prompt, chosen or rejected is missing, where chosen equals rejected, or whose ``status``
    is not ``pair`` (the RLAIF store also records dropped comparisons) are skipped: they carry no
    preference. Raises ``ValueError`` when no usable row remains.

    >>> ds = dpo_dataset([{"prompt": "2+2?", "chosen": "4", "rejected": "5", "judge": "x"}])
    >>> ds.column_names
    ['prompt', 'chosen', 'rejected']
    """
    from datasets import Dataset

    rows = _rows(source)
    out = []
    for row in rows:
        if row.get("status", "pair") != "pair" or any(row.get(c) is None for c in PREFERENCE_COLUMNS):
            continue
        chosen, rejected = completion_text(row["chosen"]), completion_text(row["rejected"])
        if chosen is None or rejected is None or chosen == rejected:
            continue
        converted = _convert(row, format, system_prompt)
        if converted is None:
            continue
        if keep_provenance:
            converted = {**{k: v for k, v in row.items() if k not in PREFERENCE_COLUMNS}, **converted}
        out.append(converted)
    if not out:
        raise ValueError("no usable preference rows (need prompt, chosen and rejected, with chosen != rejected)")
    ordered = [{**{c: r[c] for c in PREFERENCE_COLUMNS}, **r} for r in out]
    return Dataset.from_list(ordered)


def _rows(source: Any) -> list[dict[str, Any]]:
    if isinstance(source, (str, Path)):
        from rewardsmith.data import read_records

        return read_records(source)
    if hasattr(source, "to_list"):
        return source.to_list()
    if isinstance(source, Iterable):
        return [dict(r) for r in source]
    raise TypeError(f"cannot read preference rows from {type(source).__name__}")


def _convert(row: Mapping[str, Any], format: Format, system_prompt: str | None) -> dict[str, Any] | None:
    prompt, chosen, rejected = row["prompt"], row["chosen"], row["rejected"]
    if format == "keep":
        return {"prompt": prompt, "chosen": chosen, "rejected": rejected}
    if format == "plain":
        text = prompt_text(prompt) if not isinstance(prompt, str) else prompt
        if text is None:
            return None
        return {"prompt": text, "chosen": completion_text(chosen), "rejected": completion_text(rejected)}
    if format == "conversational":
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else [dict(m) for m in prompt]
        if system_prompt and not any(m.get("role") == "system" for m in messages):
            messages = [{"role": "system", "content": system_prompt}, *messages]
        return {
            "prompt": messages,
            "chosen": [{"role": "assistant", "content": completion_text(chosen)}],
            "rejected": [{"role": "assistant", "content": completion_text(rejected)}],
        }
    raise ValueError(f"format must be one of keep, plain, conversational; got {format!r}")
