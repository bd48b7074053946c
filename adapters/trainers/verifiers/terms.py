"""What both verifiers adapters share: the spec grammar read into terms, per-term options, gold columns and
messages turned into the plain dicts rewardsmith reads. Needs no verifiers install."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from rewardsmith.adapters.options import AdapterOptions, split_options
from rewardsmith.adapters.options import options_of as adapter_options
from rewardsmith.compose import as_term, spec_weight
from rewardsmith.reward import ConfigError, Reward

T = TypeVar("T")

#: The verifiers adapters' options are the adapter options (:mod:`rewardsmith.adapters.options`): they read
#: ``answer_column`` and ``unscorable_score``, and accept the others so one spec file serves every adapter.
VerifiersOptions = AdapterOptions


def options_of(options: AdapterOptions | Mapping[str, Any] | None) -> AdapterOptions:
    """Validated options, or a ConfigError naming the bad field."""
    return adapter_options(options, "verifiers adapter")


def gold_column(reward: Reward) -> str:
    """The column ``answer`` goes to: the one gold column the reward (or its parts) reads, else ``answer``."""
    try:
        columns = tuple(reward.gold_columns)
    except Exception:  # a third-party reward without the method, or one that fails: no gold column
        columns = ()
    return columns[0] if len(columns) == 1 else "answer"


def spec_terms(
    specs: Any, what: str, make: Callable[[Any, AdapterOptions], T], **options: Any
) -> list[tuple[T, float]]:
    """``(make(term, options), weight)`` for each term of ``specs`` (a spec, a list, ``{rewards: [...]}`` or a
    YAML/JSON file); a term's own ``answer_column``/``unscorable_score`` override ``options``. ``what`` names the
    caller in errors."""
    made = []
    for index, entry in enumerate(_entries(specs, what)):
        try:
            entry, own = split_options(entry, "reward spec")
            term_options = {**options, **own}
            term = as_term(entry)
            made.append((make(term, options_of(term_options)), spec_weight(term)))
        except ConfigError as exc:
            raise ConfigError(f"{what}: rewards.{index}: {exc}") from None
    return made


def check_distinct(names: list[str], what: str) -> None:
    """verifiers keys rewards and metrics by name: two terms under one name would overwrite each other."""
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(
            f"{what}: several terms are named {', '.join(map(repr, repeated))}; verifiers keys its rewards and "
            "metrics by name, so give all but one a distinct 'label'"
        )


def plain_messages(value: Any, text_role: str = "assistant") -> Any:
    """A prompt or completion as rewardsmith reads it: text as is, messages as dicts (verifiers' message models
    dumped; its completion-format ``text`` role read as ``text_role``)."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        return _plain_message(value, text_role) if _is_model(value) else value
    return [_plain_message(m, text_role) for m in value]


def plain_data(value: Any) -> bool:
    """Dataset values (text, numbers, lists, dicts), not the objects verifiers also passes (parsers, clients)."""
    return value is None or isinstance(value, (str, int, float, dict, list, tuple))


def _plain_message(message: Any, text_role: str) -> Any:
    if _is_model(message):
        message = message.model_dump(exclude_none=True)
    elif not isinstance(message, Mapping) and hasattr(message, "role") and hasattr(message, "content"):
        message = {"role": message.role, "content": message.content}
    if isinstance(message, Mapping) and message.get("role") == "text":
        message = {**message, "role": text_role}
    return message


def _is_model(value: Any) -> bool:
    return callable(getattr(value, "model_dump", None))


def _entries(specs: Any, what: str) -> list[Any]:
    if isinstance(specs, Path) or (isinstance(specs, str) and specs.endswith((".yaml", ".yml", ".json"))):
        from rewardsmith.spec_files import read_spec_file

        specs = read_spec_file(specs)  # untrusted: file references confined, imports refused, one-line errors
    if isinstance(specs, Mapping) and "rewards" in specs:
        specs = specs["rewards"]
    entries = list(specs) if isinstance(specs, (list, tuple)) else [specs]
    if not entries:
        raise ConfigError(f"{what}: no reward terms")
    return entries
