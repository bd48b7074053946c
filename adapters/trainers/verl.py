"""verl adapter: a ``compute_score`` that routes each sample to a rewardsmith reward by its ``data_source``.

verl's reward managers (0.9.1: ``naive``, ``dapo``, ``gdpo``, ``rate_limited``, ``remote``) call
``compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=..., **reward_kwargs)`` once per
sample (a sync function from a thread pool) and accept a float or a dict with a ``score`` key (the other keys
become ``reward_extra_info``, one list per key, so every sample returns the same keys). verl 0.9.1 reads::

    reward:
      custom_reward_function:
        path: pkg://rewardsmith.adapters.trainers.verl     # or this file's path
        name: compute_score                     # or compute_score_batched / compute_score_remote
        reward_kwargs: {mapping: {include_reason: true}}   # optional; a dict or a YAML path

Return value: always ``{"score": float, "unscorable": bool}`` (plus ``"reason": str`` with
``include_reason: true``, and one number per component when a route's reward is a ``weighted_sum``: its parts by
their logged names, for verl's ``gdpo`` estimator, ``algorithm.gdpo_reward_keys``; see
:mod:`rewardsmith.adapters.components`). An unscorable sample (missing gold, sandbox failure, no route) cannot be
``None`` in verl's reward tensor, so it scores ``unscorable_score`` (default 0.0) and is flagged
``unscorable: True``; the coalesced paths also log one line per batch with unscorable samples.

Multi-turn rollouts: a route with ``steps`` (``{credit, gamma, aggregate}``) reads the agent loop's decoded response
back into assistant turns, scores them turn by turn (``code_turns``, ``tool_call_validity``, outcome credit) and
returns their sum (or mean, or last) as the score, with the per-turn values as JSON text under ``step_rewards`` in
every result (``"[]"`` for a sample of another route); see :mod:`rewardsmith.adapters.trainers.verl_steps`.

The routes are the registered ``route`` reward in glob mode on the ``data_source`` column (first match wins,
case-insensitive): a route's reward is built on first use and receives the ground truth in its own column.
Default routes:

- math (``*gsm8k*``, ``*math*``, ``*aime*``, ``*amc*``, ``numina*``, ``*deepscaler*``, ``*dapo*``,
  ``*olympiad*``) → ``math_equivalence``, the ground truth passed as its gold column ``solution``;
- code (``*code*``, ``apps``, ``taco``, ``*livecodebench*``, ``*primeintellect*``, ``*humaneval*``,
  ``*mbpp*``) → ``code_tests``, the ground truth (a JSON string in verl's code datasets) parsed and passed
  as column ``tests``;
- anything else → unscorable, unless the mapping sets ``default``.

``compute_score_batched`` (async) coalesces the samples one reward loop worker scores together into one batch.
Scored by a ``rewardsmith serve`` service instead of in verl's workers: ``compute_score_remote`` (async, per
sample, coalesced the same way into chunked requests) with ``reward_kwargs: {remote: {urls: [http://host:8000]}}``;
a route's ``reward`` is then a served name.
"""

# No ``from __future__ import annotations``: verl loads this file by path under a synthetic module name that is not
# in ``sys.modules``, where pydantic cannot resolve postponed annotations (``VerlMapping is not fully defined``).
import asyncio
import json
import logging
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rewardsmith.adapters.components import component_names, component_scores
from rewardsmith.adapters.options import UnscorableScore
from rewardsmith.adapters.trainers.verl_calls import Coalescer, ScorerCache, plain, report_unscorable, settings_key
from rewardsmith.adapters.trainers.verl_steps import STEPS_KEY, StepsReward, VerlSteps, steps_value
from rewardsmith.bridge import to_async
from rewardsmith.compose import Route, build_reward
from rewardsmith.hard_timeout import HardTimeoutPool
from rewardsmith.reward import ConfigError, Reward, RewardConfig, ascore_rows, score_rows
from rewardsmith.types import RewardResult

logger = logging.getLogger(__name__)


class VerlRoute(BaseModel):
    """Data sources matching ``match`` are scored by ``reward`` with the ground truth in ``ground_truth_column``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    match: list[str] = Field(min_length=1, description="glob patterns on data_source (case-insensitive)")
    reward: str = Field(description="registered reward name")
    config: dict[str, Any] = Field(default_factory=dict)
    ground_truth_column: str = Field("solution", description="row column the ground truth is passed in")
    parse_json: bool = Field(False, description="ground truth given as a JSON string (e.g. code tests)")
    steps: VerlSteps | None = Field(None, description="score a multi-turn rollout turn by turn (verl_steps)")


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


class VerlMapping(UnscorableScore):
    """How ``compute_score`` routes: ordered routes, an optional fallback, and what unscorable becomes."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    routes: list[VerlRoute] = Field(default_factory=lambda: [MATH_ROUTE, CODE_ROUTE])
    default: VerlRoute | None = Field(None, description="route for unmatched data sources (None: unscorable)")
    include_reason: bool = Field(False, description="add a 'reason' string to every result")


#: Keys of every result (``reason`` with ``include_reason``), which no component may take.
RESULT_KEYS = ("score", "unscorable", "reason", STEPS_KEY)

#: Row key that carries a sample's ground truth until its route puts it in the route's column.
GROUND_TRUTH_KEY = "__verl_ground_truth__"


class RouteReward(Reward[RewardConfig]):
    """One verl route as a reward the ``route`` reward dispatches to: built on first use, ground truth in its column.

    Built lazily because the default routes name rewards (``code_tests``) a math-only run may have no sandbox
    for; a route whose reward cannot be built leaves its own samples unscorable, saying why, and is tried again
    on the next batch.
    """

    def __init__(self, route: VerlRoute, build: Callable[[VerlRoute], Reward]) -> None:
        super().__init__()
        self.route = route
        self.build = build
        self.built: Reward | None = None
        self._lock = threading.Lock()  # verl's reward worker calls from a thread pool: build once
        self.__name__ = route.reward

    def reward(self) -> Reward:
        with self._lock:
            if self.built is None:
                self.built = self.build(self.route)
            return self.built

    async def combine(self, texts: list[str | None], rows: list[dict[str, Any]], *, inline: bool) -> list[RewardResult]:
        try:
            reward = self.reward()
        except ConfigError as exc:
            return [RewardResult.unscorable(f"route {self.route.reward!r} unavailable: {exc}") for _ in texts]
        shaped = []
        for row in rows:
            rest = dict(row)
            shaped.append(_row(self.route, rest.pop("data_source", None), rest.pop(GROUND_TRUTH_KEY, None), rest))
        return await ascore_rows(reward, texts, shaped, inline=inline)


class VerlScorer:
    """Callable with verl's ``compute_score`` signature: a ``route`` reward in glob mode on ``data_source``.

    The mapping's routes become that reward's routes (first match wins, case-insensitive); each route's reward is
    built once, on first use. Sync calls (verl's thread pool) score inline; on the async path (:meth:`ascore_one`)
    calls made on one event loop within ``LINGER_S`` of each other are coalesced into one :meth:`ascore_many`
    batch: verl 0.9.1's reward loop worker calls ``compute_score`` once per sample, all samples of its chunk at
    once, and this is how they reach rewardsmith as one batch.
    """

    LINGER_S = 0.01
    MAX_BATCH = 1024

    def __init__(self, mapping: VerlMapping | Mapping[str, Any] | None = None) -> None:
        self.mapping = load_mapping(mapping)
        self.route_rewards = [RouteReward(r, self.build) for r in self.mapping.routes]
        default = RouteReward(self.mapping.default, self.build) if self.mapping.default is not None else None
        self.router = Route(
            column="data_source",
            mode="glob",
            ignore_case=True,
            routes=[{"match": rr.route.match, "reward": rr} for rr in self.route_rewards],
            default=default,
        )
        if default is not None:
            self.route_rewards.append(default)
        self.component_names = self._components()
        self.has_steps = any(r.route.steps is not None for r in self.route_rewards)
        self._coalescers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> _Coalescer

    def _components(self) -> list[str]:
        """The component keys every result carries: the parts of the routes whose reward is a ``weighted_sum``.

        verl stacks ``reward_extra_info`` by the first sample's keys, so every sample must return the same keys
        whatever its route: those routes are built now (not on first use) to learn their parts' names, and a
        sample of another route reports ``unscorable_score`` for them. A name that would overwrite a key of the
        result is a configuration error.
        """
        names: list[str] = []
        for route_reward in self.route_rewards:
            if route_reward.route.reward == "weighted_sum" and route_reward.route.steps is None:
                names.extend(component_names(route_reward.reward()))
        names = list(dict.fromkeys(names))
        taken = [name for name in names if name in RESULT_KEYS]
        if taken:
            raise ConfigError(
                f"verl mapping: weighted_sum parts named {taken} would overwrite the result's own keys "
                f"{list(RESULT_KEYS)}; give those parts a distinct 'label'"
            )
        return names

    def built_rewards(self) -> list[Reward]:
        """The routes' rewards built so far (each is built on its route's first sample), to inspect or close."""
        return [route.built for route in self.route_rewards if route.built is not None]

    def route_for(self, data_source: Any) -> tuple[int, VerlRoute] | None:
        """The index and route that score ``data_source``: the first that matches, else the default, else None."""
        index = self.router.route_index(_source_name(data_source))
        if index is not None:
            return index, self.mapping.routes[index]
        if self.mapping.default is not None:
            return len(self.mapping.routes), self.mapping.default
        return None

    def build(self, route: VerlRoute) -> Reward:
        """The route's reward, its worker pool started: verl's first batch must not meet a cold pool.

        A cold hard-timeout pool answers "no worker ready" within the call's timeout, which would make every
        symbolic comparison of a fresh reward worker's first batch unscorable; the threads of that batch wait
        here (under the route's lock) until a worker is up instead.
        """
        reward = build_reward({"name": route.reward, "config": route.config})
        pool = getattr(reward, "pool", None)
        if isinstance(pool, HardTimeoutPool):  # one worker ready is enough; the others keep starting meanwhile
            outcome = pool.call(abs, 0, timeout_s=pool.startup_timeout_s)
            if not outcome.ok:
                logger.warning("rewardsmith verl: %s worker pool did not start: %s", route.reward, outcome.error)
        return StepsReward(reward, route.steps) if route.steps is not None else reward

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
        return [
            self._verl_result(r) for r in self.score_results(data_sources, solution_strs, ground_truths, extra_infos)
        ]

    def score_results(
        self,
        data_sources: Sequence[Any],
        solution_strs: Sequence[Any],
        ground_truths: Sequence[Any],
        extra_infos: Sequence[Any] | None = None,
    ) -> list[RewardResult]:
        """The sync face: the route reward's inline path (no event loop, no thread)."""
        return score_rows(self.router, *_samples(data_sources, solution_strs, ground_truths, extra_infos))

    async def ascore_results(
        self,
        data_sources: Sequence[Any],
        solution_strs: Sequence[Any],
        ground_truths: Sequence[Any],
        extra_infos: Sequence[Any] | None = None,
    ) -> list[RewardResult]:
        """:meth:`score_results` in a worker thread: in-process rewards are CPU-bound sync code, and the event loop
        keeps collecting the next batch meanwhile."""
        return await to_async(self.score_results, data_sources, solution_strs, ground_truths, extra_infos)

    async def ascore_many(self, *columns: Sequence[Any]) -> list[dict[str, Any]]:
        """One coalesced batch: scored, reported when some samples are unscorable, in verl's result shape."""
        try:
            results = await self.ascore_results(*columns)
        except Exception as exc:  # never into verl's reward worker: every sample of the batch says why
            logger.exception("rewardsmith verl: scoring a batch failed")
            results = [RewardResult.unscorable(f"rewardsmith scorer failed: {type(exc).__name__}: {exc}")] * len(
                columns[0]
            )
        report_unscorable(results)
        return [self._verl_result(r) for r in results]

    async def ascore_one(self, data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any) -> dict:
        loop = asyncio.get_running_loop()
        coalescer = self._coalescers.get(loop)
        if coalescer is None:
            coalescer = self._coalescers[loop] = Coalescer(self.ascore_many, self.max_batch, self.LINGER_S)
        return await coalescer.submit((data_source, solution_str, ground_truth, extra_info))

    @property
    def max_batch(self) -> int:
        return self.MAX_BATCH

    def _verl_result(self, result: RewardResult) -> dict[str, Any]:
        out: dict[str, Any] = {"score": self.mapping.as_number(result.score), "unscorable": result.score is None}
        if self.mapping.include_reason:
            out["reason"] = result.reason
        if self.has_steps:
            out[STEPS_KEY] = steps_value(result)
        if self.component_names:
            parts = component_scores(result)
            for name in self.component_names:
                out[name] = self.mapping.as_number(parts.get(name))
        return out


def _source_name(data_source: Any) -> str:
    """``data_source`` as the text routes match (verl's are text; anything else by its ``str``, None as empty)."""
    return data_source if isinstance(data_source, str) else str(data_source) if data_source is not None else ""


def _samples(
    data_sources: Sequence[Any],
    solution_strs: Sequence[Any],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None,
) -> tuple[list[str | None], list[dict[str, Any]]]:
    """verl's columns as the route reward's texts and rows (the ground truth under :data:`GROUND_TRUTH_KEY`)."""
    n = len(solution_strs)
    extras = list(extra_infos) if extra_infos is not None else [None] * n
    texts = [s if isinstance(s, str) else None for s in solution_strs]
    rows = []
    for source, truth, extra in zip(data_sources, ground_truths, extras, strict=True):
        row: dict[str, Any] = dict(extra) if isinstance(extra, Mapping) else {}
        row[GROUND_TRUTH_KEY] = truth
        row["data_source"] = _source_name(source)
        rows.append(row)
    return texts, rows


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
        from rewardsmith.spec_files import read_spec_file

        # its routes hold reward specs: read as any spec file (file references confined, imports refused)
        mapping = read_spec_file(mapping, what="verl mapping file") or {}
    try:
        return VerlMapping.model_validate(dict(mapping))
    except (ValidationError, TypeError, ValueError) as exc:
        raise ConfigError(f"invalid verl reward mapping: {exc}") from None


_SCORERS = ScorerCache(VerlScorer)


def _scorer(mapping: Any) -> VerlScorer:
    return _SCORERS.get(settings_key(mapping))


def compute_score(
    data_source: Any = None,
    solution_str: Any = None,
    ground_truth: Any = None,
    extra_info: Any = None,
    mapping: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's per-sample reward: ``{"score": float, "unscorable": bool}`` from the routed rewardsmith reward.

    ``mapping`` (a dict or a YAML path, passed through verl's ``reward_kwargs``) replaces the default routes.

    >>> compute_score("openai/gsm8k", "... \\\\boxed{72}", "72")  # doctest: +SKIP
    {'score': 1.0, 'unscorable': False}
    """
    return _scorer(mapping)(data_source, solution_str, ground_truth, extra_info)


async def compute_score_batched(
    data_source: Any = None,
    solution_str: Any = None,
    ground_truth: Any = None,
    extra_info: Any = None,
    mapping: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl 0.9.1's batch path: async, per sample; the samples a reward loop worker scores together are coalesced
    into one batch (one sandbox batch, one worker-pool map) and each batch with unscorable samples is reported.

    Same result as :func:`compute_score`; ``reward.custom_reward_function.name: compute_score_batched``.
    """
    return await _scorer(mapping).ascore_one(data_source, solution_str, ground_truth, extra_info)


# -- remote: the same routes, scored by a `rewardsmith serve` service -------------------------------------------
class RemoteVerlScorer(VerlScorer):
    """:class:`VerlScorer` whose routes name rewards *served* by ``rewardsmith serve``.

    ``remote`` holds the ``remote`` reward's settings (``urls``, ``token_env``, ``chunk_size``, ``timeout_s``, ...);
    a route's ``reward`` is the served name and its ``config`` may override those settings per route.
    verl calls the async ``compute_score`` once per sample, many at a time: calls made within
    ``LINGER_S`` of each other are coalesced into one batch, so thousands of concurrent calls become a
    few chunked requests instead of a flood the server would answer with 429.
    """

    def __init__(self, remote: Mapping[str, Any], mapping: VerlMapping | Mapping[str, Any] | None = None) -> None:
        super().__init__(mapping)
        self.remote = dict(remote)

    @property
    def max_batch(self) -> int:
        return int(self.remote.get("chunk_size", 64)) * int(self.remote.get("max_in_flight", 8))

    def build(self, route: VerlRoute) -> Reward:
        from rewardsmith.adapters.runtime.remote import RemoteReward

        return RemoteReward({**self.remote, **route.config, "reward": route.reward})

    async def ascore_results(
        self,
        data_sources: Sequence[Any],
        solution_strs: Sequence[Any],
        ground_truths: Sequence[Any],
        extra_infos: Sequence[Any] | None = None,
    ) -> list[RewardResult]:
        """The async face: the route reward's async path, every route's samples in flight together."""
        return await ascore_rows(self.router, *_samples(data_sources, solution_strs, ground_truths, extra_infos))


_REMOTE_SCORERS = ScorerCache(lambda remote, mapping: RemoteVerlScorer(remote, mapping))


def _remote_scorer(remote: Any, mapping: Any) -> RemoteVerlScorer:
    remote = plain(remote)
    if not isinstance(remote, Mapping) or not remote.get("urls"):
        raise ConfigError("compute_score_remote needs reward_kwargs.remote with 'urls' (rewardsmith serve base URLs)")
    return _REMOTE_SCORERS.get(settings_key(remote), settings_key(mapping))


async def compute_score_remote(
    data_source: Any = None,
    solution_str: Any = None,
    ground_truth: Any = None,
    extra_info: Any = None,
    remote: Any = None,
    mapping: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's async per-sample reward, scored by a ``rewardsmith serve`` service; same result shape as
    :func:`compute_score`. ``remote`` is the ``remote`` reward's config without ``reward``
    (``{"urls": [...], "token_env": ...}``); ``mapping`` routes data sources to served reward names::

        custom_reward_function:
          path: pkg://rewardsmith.adapters.trainers.verl
          name: compute_score_remote
          reward_kwargs: {remote: {urls: ["http://10.0.0.5:8000"]}}
    """
    scorer = _remote_scorer(remote, mapping)
    return await scorer.ascore_one(data_source, solution_str, ground_truth, extra_info)
