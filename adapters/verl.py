"""verl adapter: a ``compute_score`` that routes each sample to a rewardkit reward by its ``data_source``.

verl's reward managers call ``compute_score(data_source=..., solution_str=..., ground_truth=...,
extra_info=...)`` once per sample and accept a float or a dict with a ``score`` key (the other keys are
collected into ``reward_extra_info``, one list per key, so every sample must return the same keys).
Point verl at this module::

    custom_reward_function:
      path: <site-packages>/rewardkit/adapters/verl.py
      name: compute_score
      reward_kwargs: {mapping: /path/to/verl_rewards.yaml}     # optional; defaults below

Return value: always ``{"score": float, "unscorable": bool}`` (plus ``"reason": str`` with
``include_reason: true``). An unscorable sample (missing gold, sandbox failure, no route) cannot be
``None`` in verl's reward tensor, so it scores ``unscorable_score`` (default 0.0) and is flagged
``unscorable: True``, which verl logs per batch, so infrastructure failures stay visible.

Default routes (first match wins; case-insensitive globs on ``data_source``):

- math (``*gsm8k*``, ``*math*``, ``*aime*``, ``*amc*``, ``numina*``, ``*deepscaler*``, ``*dapo*``,
  ``*olympiad*``) → ``math_equivalence``, the ground truth passed as its gold column ``solution``;
- code (``*code*``, ``apps``, ``taco``, ``*livecodebench*``, ``*primeintellect*``, ``*humaneval*``,
  ``*mbpp*``) → ``code_tests``, the ground truth (a JSON string in verl's code datasets) parsed and passed
  as column ``tests``;
- anything else → unscorable, unless the mapping sets ``default``.

Scored by a ``rewardkit serve`` service instead of in verl's workers: ``compute_score_remote`` (async, per
sample; concurrent calls are coalesced into chunked requests) or ``compute_score_batch_remote`` (verl's batch
manager), with ``reward_kwargs: {remote: {urls: [http://host:8000]}}``; a route's ``reward`` is then a served name.
"""

# No ``from __future__ import annotations``: verl loads this file by path under a synthetic module name that is not
# in ``sys.modules``, where pydantic cannot resolve postponed annotations (``VerlMapping is not fully defined``).
import asyncio
import fnmatch
import json
import logging
import threading
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rewardkit.compose import build_reward
from rewardkit.reward import ConfigError, Reward
from rewardkit.types import RewardResult

logger = logging.getLogger(__name__)


class VerlRoute(BaseModel):
    """Data sources matching ``match`` are scored by ``reward`` with the ground truth in ``ground_truth_column``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    match: list[str] = Field(min_length=1, description="glob patterns on data_source (case-insensitive)")
    reward: str = Field(description="registered reward name")
    config: dict[str, Any] = Field(default_factory=dict)
    ground_truth_column: str = Field("solution", description="row column the ground truth is passed in")
    parse_json: bool = Field(False, description="ground truth given as a JSON string (e.g. code tests)")

    def matches(self, data_source: str) -> bool:
        source = data_source.lower()
        return any(fnmatch.fnmatchcase(source, pattern.lower()) for pattern in self.match)


MATH_ROUTE = VerlRoute(
    match=["*gsm8k*", "*math*", "*aime*", "*amc*", "numina*", "*deepscaler*", "*dapo*", "*olympiad*"],
    reward="math_equivalence",
)
CODE_ROUTE = VerlRoute(
    match=["*code*", "apps", "taco", "*livecodebench*", "*primeintellect*", "*humaneval*", "*mbpp*"],
    reward="code_tests",
    ground_truth_column="tests",
    parse_json=True,
)


class VerlMapping(BaseModel):
    """How ``compute_score`` routes: ordered routes, an optional fallback, and what unscorable becomes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    routes: list[VerlRoute] = Field(default_factory=lambda: [MATH_ROUTE, CODE_ROUTE])
    default: VerlRoute | None = Field(None, description="route for unmatched data sources (None: unscorable)")
    unscorable_score: float = Field(0.0, description="score verl sees for an unscorable sample")
    include_reason: bool = Field(False, description="add a 'reason' string to every result")


class VerlScorer:
    """Callable with verl's ``compute_score`` signature; builds each route's reward once, on first use."""

    def __init__(self, mapping: VerlMapping | Mapping[str, Any] | None = None) -> None:
        self.mapping = load_mapping(mapping)
        self._rewards: dict[int, Reward] = {}
        self._rewards_lock = threading.Lock()  # verl's reward worker calls from a thread pool: build each once

    def group_by_route(
        self, data_sources: Sequence[Any], n: int
    ) -> tuple[list[RewardResult | None], dict[int, tuple[VerlRoute, list[int]]]]:
        """Sample indices per matching route, and ``n`` results so far: unscorable where no route matches."""
        results: list[RewardResult | None] = [None] * n
        groups: dict[int, tuple[VerlRoute, list[int]]] = {}
        for i, source in enumerate(data_sources):
            found = self.route_for(source)
            if found is None:
                results[i] = RewardResult.unscorable(f"no rewardkit route for data_source {source!r}")
            else:
                groups.setdefault(found[0], (found[1], []))[1].append(i)
        return results, groups

    def route_for(self, data_source: Any) -> tuple[int, VerlRoute] | None:
        name = str(data_source) if data_source is not None else ""
        for i, route in enumerate(self.mapping.routes):
            if route.matches(name):
                return i, route
        if self.mapping.default is not None:
            return len(self.mapping.routes), self.mapping.default
        return None

    def reward(self, index: int, route: VerlRoute) -> Reward:
        with self._rewards_lock:
            if index not in self._rewards:
                self._rewards[index] = self.build(route)
            return self._rewards[index]

    def build(self, route: VerlRoute) -> Reward:
        return build_reward({"name": route.reward, "config": route.config})

    def __call__(
        self,
        data_source: Any = None,
        solution_str: Any = None,
        ground_truth: Any = None,
        extra_info: Any = None,
        **_: Any,
    ) -> dict[str, Any]:
        return self.score_many([data_source], [solution_str], [ground_truth], [extra_info])[0]

    def score_many(
        self,
        data_sources: Sequence[Any],
        solution_strs: Sequence[Any],
        ground_truths: Sequence[Any],
        extra_infos: Sequence[Any] | None = None,
    ) -> list[dict[str, Any]]:
        """Score a batch (verl's batch reward manager shape); samples of one route are scored together."""
        n = len(solution_strs)
        extra_infos = list(extra_infos) if extra_infos is not None else [None] * n
        results, groups = self.group_by_route(data_sources, n)
        for index, (route, idx) in groups.items():
            try:
                reward = self.reward(index, route)
            except ConfigError as exc:
                for i in idx:
                    results[i] = RewardResult.unscorable(f"route {route.reward!r} unavailable: {exc}")
                continue
            texts = [solution_strs[i] if isinstance(solution_strs[i], str) else None for i in idx]
            rows = [_row(route, data_sources[i], ground_truths[i], extra_infos[i]) for i in idx]
            for i, result in zip(idx, reward.score_rows(texts, rows), strict=True):
                results[i] = result
        return [self._verl_result(r) for r in results]  # type: ignore[arg-type]

    def _verl_result(self, result: RewardResult) -> dict[str, Any]:
        unscorable = result.score is None
        out: dict[str, Any] = {
            "score": float(self.mapping.unscorable_score if unscorable else result.score),
            "unscorable": unscorable,
        }
        if self.mapping.include_reason:
            out["reason"] = result.reason
        return out


def _row(route: VerlRoute, data_source: Any, ground_truth: Any, extra_info: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict(extra_info) if isinstance(extra_info, Mapping) else {}
    if route.parse_json and isinstance(ground_truth, str):
        try:
            ground_truth = json.loads(ground_truth)
        except json.JSONDecodeError:
            logger.debug("ground truth of %s is not JSON; passed as text", data_source)
    row[route.ground_truth_column] = ground_truth
    row["data_source"] = data_source
    return row


def load_mapping(mapping: VerlMapping | Mapping[str, Any] | str | Path | None) -> VerlMapping:
    """A :class:`VerlMapping` from itself, a dict, a YAML/JSON file path, or ``None`` (the defaults)."""
    mapping = plain(mapping)
    if mapping is None:
        return VerlMapping()
    if isinstance(mapping, VerlMapping):
        return mapping
    if isinstance(mapping, (str, Path)):
        import yaml

        path = Path(mapping)
        if not path.exists():
            raise FileNotFoundError(f"no such verl mapping file: {path}")
        mapping = yaml.safe_load(path.read_text()) or {}
    try:
        return VerlMapping.model_validate(dict(mapping))
    except (ValidationError, TypeError, ValueError) as exc:
        raise ConfigError(f"invalid verl reward mapping: {exc}") from None


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


def _key(value: Any) -> str:
    """A cache key for a mapping or remote setting: ``""`` (defaults), a file path, or canonical JSON."""
    value = plain(value.model_dump() if isinstance(value, VerlMapping) else value)
    if value is None or isinstance(value, (str, Path)):
        return str(value or "")
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"verl reward_kwargs must be plain data (dicts, lists, numbers, text): {exc}") from None


def _unkey(key: str) -> Any:
    return json.loads(key) if key.startswith(("{", "[")) else (key or None)


class _ScorerCache:
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
                scorer = self._scorers[keys] = self.build(*(_unkey(k) for k in keys))
            return scorer


_SCORERS = _ScorerCache(VerlScorer)


def _scorer(mapping: Any) -> VerlScorer:
    return _SCORERS.get(_key(mapping))


def compute_score(
    data_source: Any = None,
    solution_str: Any = None,
    ground_truth: Any = None,
    extra_info: Any = None,
    mapping: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's per-sample reward: ``{"score": float, "unscorable": bool}`` from the routed rewardkit reward.

    ``mapping`` (a dict or a YAML path, passed through verl's ``reward_kwargs``) replaces the default routes.

    >>> compute_score("openai/gsm8k", "... \\\\boxed{72}", "72")  # doctest: +SKIP
    {'score': 1.0, 'unscorable': False}
    """
    return _scorer(mapping)(data_source, solution_str, ground_truth, extra_info)


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    mapping: Any = None,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """verl's batch reward-manager shape: lists in, one result dict per sample out."""
    return _scorer(mapping).score_many(data_sources, solution_strs, ground_truths, extra_infos)


# -- remote: the same routes, scored by a `rewardkit serve` service -------------------------------------------
class RemoteVerlScorer(VerlScorer):
    """:class:`VerlScorer` whose routes name rewards *served* by ``rewardkit serve``.

    ``remote`` holds the ``remote`` reward's settings (``urls``, ``token_env``, ``chunk_size``, ``timeout_s``, ...);
    a route's ``reward`` is the served name and its ``config`` may override those settings per route.
    verl calls the async ``compute_score`` once per sample, many at a time: calls made within
    ``LINGER_S`` of each other are coalesced into one batch, so thousands of concurrent calls become a
    few chunked requests instead of a flood the server would answer with 429.
    """

    LINGER_S = 0.01

    def __init__(self, remote: Mapping[str, Any], mapping: VerlMapping | Mapping[str, Any] | None = None) -> None:
        super().__init__(mapping)
        self.remote = dict(remote)
        self._coalescers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> _Coalescer

    def build(self, route: VerlRoute) -> Reward:
        from rewardkit.adapters.remote import RemoteReward

        return RemoteReward({**self.remote, **route.config, "reward": route.reward})

    async def ascore_many(
        self,
        data_sources: Sequence[Any],
        solution_strs: Sequence[Any],
        ground_truths: Sequence[Any],
        extra_infos: Sequence[Any] | None = None,
    ) -> list[dict[str, Any]]:
        """:meth:`score_many` on the async path: every route's samples in flight together."""
        n = len(solution_strs)
        extra_infos = list(extra_infos) if extra_infos is not None else [None] * n
        results, groups = self.group_by_route(data_sources, n)

        async def score_route(index: int, route: VerlRoute, idx: list[int]) -> None:
            try:
                reward = self.reward(index, route)
            except ConfigError as exc:
                for i in idx:
                    results[i] = RewardResult.unscorable(f"route {route.reward!r} unavailable: {exc}")
                return
            texts = [solution_strs[i] if isinstance(solution_strs[i], str) else None for i in idx]
            rows = [_row(route, data_sources[i], ground_truths[i], extra_infos[i]) for i in idx]
            for i, result in zip(idx, await reward.ascore_rows(texts, rows), strict=True):
                results[i] = result

        await asyncio.gather(*(score_route(index, route, idx) for index, (route, idx) in groups.items()))
        return [self._verl_result(r) for r in results]  # type: ignore[arg-type]

    async def ascore_one(self, data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any) -> dict:
        loop = asyncio.get_running_loop()
        coalescer = self._coalescers.get(loop)
        if coalescer is None:
            size = int(self.remote.get("chunk_size", 64)) * int(self.remote.get("max_in_flight", 8))
            coalescer = self._coalescers[loop] = _Coalescer(self.ascore_many, size, self.LINGER_S)
        return await coalescer.submit((data_source, solution_str, ground_truth, extra_info))


class _Coalescer:
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


_REMOTE_SCORERS = _ScorerCache(lambda remote, mapping: RemoteVerlScorer(remote, mapping))


def _remote_scorer(remote: Any, mapping: Any) -> RemoteVerlScorer:
    remote = plain(remote)
    if not isinstance(remote, Mapping) or not remote.get("urls"):
        raise ConfigError("compute_score_remote needs reward_kwargs.remote with 'urls' (rewardkit serve base URLs)")
    return _REMOTE_SCORERS.get(_key(remote), _key(mapping))


async def compute_score_remote(
    data_source: Any = None,
    solution_str: Any = None,
    ground_truth: Any = None,
    extra_info: Any = None,
    remote: Any = None,
    mapping: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's async per-sample reward, scored by a ``rewardkit serve`` service; same result shape as
    :func:`compute_score`. ``remote`` is the ``remote`` reward's config without ``reward``
    (``{"urls": [...], "token_env": ...}``); ``mapping`` routes data sources to served reward names::

        custom_reward_function:
          path: pkg://rewardkit.adapters.verl
          name: compute_score_remote
          reward_kwargs: {remote: {urls: ["http://10.0.0.5:8000"]}}
    """
    scorer = _remote_scorer(remote, mapping)
    return await scorer.ascore_one(data_source, solution_str, ground_truth, extra_info)


def compute_score_batch_remote(
    data_sources: Sequence[Any],
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    remote: Any = None,
    mapping: Any = None,
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """verl's batch reward-manager shape, scored by a ``rewardkit serve`` service (chunked, with fail-over)."""
    return _remote_scorer(remote, mapping).score_many(data_sources, solution_strs, ground_truths, extra_infos)
