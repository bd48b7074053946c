"""How verl's calls reach rewardsmith: plain settings, one scorer per setting, per-sample calls coalesced into batches.

verl 0.9.1 passes ``reward_kwargs`` as OmegaConf containers, calls ``compute_score`` once per sample (a sync one
from a thread pool, an async one on the reward loop worker's event loop) and averages ``reward_extra_info`` keys
over validation sets only. The pieces here turn those calls into what rewardsmith wants: plain data, scorers built
once whatever the threads, batches, and a report line for every batch with unscorable samples.
"""

import asyncio
import json
import logging
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rewardsmith.reward import ConfigError
from rewardsmith.types import RewardResult

logger = logging.getLogger("rewardsmith.adapters.trainers.verl")


def plain(value: Any) -> Any:
    """``value`` with OmegaConf containers (verl's ``reward_kwargs``) turned into dicts and lists, recursively.

    verl passes ``reward_kwargs`` as ``DictConfig``/``ListConfig``; neither is a ``dict``/``list``, and
    ``json.dumps`` rejects them.
    """
    if type(value).__module__.startswith("omegaconf"):
        from omegaconf import OmegaConf

        return OmegaConf.to_container(value, resolve=True)
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def settings_key(value: Any) -> str:
    """A cache key for a mapping or remote setting: ``""`` (defaults), a file path, or canonical JSON."""
    value = plain(value.model_dump() if hasattr(value, "model_dump") else value)
    if value is None or isinstance(value, (str, Path)):
        return str(value or "")
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"verl reward_kwargs must be plain data (dicts, lists, numbers, text): {exc}") from None


def _from_key(key: str) -> Any:
    return json.loads(key) if key.startswith(("{", "[")) else (key or None)


class ScorerCache:
    """Scorers by their settings, each built once even when verl's first batch asks from many threads at once."""

    def __init__(self, build: Any, size: int = 16) -> None:
        self.build = build
        self.size = size
        self._scorers: dict[tuple[str, ...], Any] = {}
        self._lock = threading.Lock()

    def get(self, *keys: str) -> Any:
        with self._lock:
            scorer = self._scorers.get(keys)
            if scorer is None:
                if len(self._scorers) >= self.size:
                    self._scorers.pop(next(iter(self._scorers)))
                scorer = self._scorers[keys] = self.build(*(_from_key(k) for k in keys))
            return scorer


class Coalescer:
    """Collects per-sample calls on one event loop and scores them as one batch."""

    def __init__(self, score_many: Any, max_batch: int, linger_s: float) -> None:
        self.score_many = score_many
        self.max_batch = max(1, max_batch)
        self.linger_s = linger_s
        self.pending: list[tuple[tuple[Any, Any, Any, Any], asyncio.Future]] = []
        self.timer: asyncio.TimerHandle | None = None
        self.running: set[asyncio.Task] = set()

    async def submit(self, sample: tuple[Any, Any, Any, Any]) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        self.pending.append((sample, future))
        if len(self.pending) >= self.max_batch:
            self.flush()
        elif self.timer is None:
            self.timer = loop.call_later(self.linger_s, self.flush)
        return await future

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        batch, self.pending = self.pending, []
        if batch:
            task = asyncio.ensure_future(self._score(batch))
            self.running.add(task)
            task.add_done_callback(self.running.discard)

    async def _score(self, batch: list[tuple[tuple[Any, Any, Any, Any], asyncio.Future]]) -> None:
        columns = list(zip(*(sample for sample, _ in batch), strict=True))
        try:
            results = await self.score_many(*columns)
        except Exception as exc:  # never leave a caller waiting
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)


def report_unscorable(results: Sequence[RewardResult]) -> None:
    """One WARNING line per batch that has unscorable samples: how many, and why (the commonest reasons).

    verl 0.9.1 averages ``reward_extra_info`` keys only over validation sets; a training batch keeps them per
    sample. This line is how an unscorable share in a training batch shows without opening the rollout dumps.
    """
    failed = [r for r in results if r.score is None]
    if not failed:
        return
    reasons = Counter((r.reason or "no reason given")[:120] for r in failed).most_common(3)
    why = "; ".join(f"{count}x {reason}" for reason, count in reasons)
    logger.warning("rewardsmith verl: %d of %d samples in this batch unscorable (%s)", len(failed), len(results), why)
