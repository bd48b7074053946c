"""Fan a batch out over the pool's actors in bounded chunks and bring every sample back.

The loop owns three promises. Bounded: at most ``max_in_flight`` chunks are submitted at once, spread over the
live actors. Complete: a chunk whose actor or node dies (or that overruns ``chunk_timeout_s``) is rerun on a live
actor, and a replacement actor is started, so the batch equals local scoring sample for sample. Finite: a chunk
that fails ``max_retries`` + 1 times, or a batch that finds no live actor within ``actor_start_timeout_s``, ends
as ``None`` with the reason, never 0 and never a hang.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.adapters.runtime.ray.actor import start_actor
from rewardsmith.adapters.runtime.ray.config import RayPoolConfig, chunk_bounds
from rewardsmith.groups import chunk_plan, dependency_of
from rewardsmith.types import RewardResult

logger = logging.getLogger(__name__)

#: How long one wait on Ray lasts before the loop checks deadlines and new actors again.
POLL_S = 0.5


@dataclass
class Member:
    """One actor of the pool: its handle, readiness, node and the chunks queued on it (in submission order)."""

    handle: Any
    ready_ref: Any
    node_id: str | None = None
    queue: deque[Any] = field(default_factory=deque)
    head_since: float = 0.0  # when the chunk now running on it started (its first queued chunk)


@dataclass
class Chunk:
    indices: list[int]  # the batch's samples it holds, in batch order (whole groups of a group reward)
    attempts: int = 0


class ActorSet:
    """The pool's actors, kept across batches (so rewards stay warm) and replaced when they die."""

    def __init__(self, spec: Any, config: RayPoolConfig) -> None:
        self.spec = spec
        self.config = config
        self.members: list[Member] = []
        self.last_failure = ""

    def start(self) -> Member:
        cfg = self.config
        handle = start_actor(
            self.spec, num_cpus=cfg.actor_num_cpus, placement=cfg.placement, runtime_env=cfg.runtime_env
        )
        member = Member(handle=handle, ready_ref=handle.node_id.remote())
        self.members.append(member)
        return member

    def fill(self) -> None:
        while len(self.members) < self.config.num_actors:
            self.start()

    def ready(self) -> list[Member]:
        return [m for m in self.members if m.node_id is not None]

    def starting(self) -> list[Member]:
        return [m for m in self.members if m.node_id is None]

    def poll(self, timeout_s: float = 0.0) -> list[Member]:
        """Mark actors whose reward finished building as ready; return those that failed to start."""
        import ray

        starting = {m.ready_ref: m for m in self.starting()}
        if not starting:
            return []
        done, _ = ray.wait(list(starting), num_returns=len(starting), timeout=timeout_s)
        failed = []
        for ref in done:
            member = starting[ref]
            try:
                member.node_id = ray.get(ref)
            except Exception as exc:
                self.retire(member, f"actor failed to start: {_short(exc)}")
                failed.append(member)
        return failed

    def retire(self, member: Member, reason: str) -> None:
        """Drop a dead or stuck actor (killed, so it frees its CPU) and remember why for the reasons."""
        import ray

        if member in self.members:
            self.members.remove(member)
        self.last_failure = reason
        try:
            ray.kill(member.handle, no_restart=True)
        except Exception:  # already gone with its node
            logger.debug("ray.kill of a dead actor failed", exc_info=True)

    def close(self) -> None:
        for member in list(self.members):
            self.retire(member, "pool closed")
        self.last_failure = ""


class BatchRun:
    """One batch through the pool; :meth:`run` returns one result per sample."""

    def __init__(
        self, actors: ActorSet, texts: list[str | None], rows: list[dict[str, Any]], reward: Any = None
    ) -> None:
        self.actors = actors
        self.cfg = actors.config
        self.texts = texts
        self.rows = rows
        self.out: list[RewardResult | None] = [None] * len(texts)
        bounds = chunk_bounds(len(texts), self.cfg.chunk_size, self.cfg.num_actors)
        if dependency_of(reward) is None:
            plan = [list(range(a, b)) for a, b in bounds]
        else:  # ``reward`` (the inner reward) scores groups together: never split one across actors
            plan = chunk_plan(reward, rows, bounds[0][1] - bounds[0][0] if bounds else 1)
        self.pending: deque[Chunk] = deque(Chunk(indices) for indices in plan)
        self.inflight: dict[Any, tuple[Chunk, Member]] = {}
        self.max_in_flight = self.cfg.max_in_flight or 2 * self.cfg.num_actors
        self.replacements_left = max(1, self.cfg.max_retries) * self.cfg.num_actors

    def run(self) -> list[RewardResult]:
        import ray

        self.actors.fill()
        waiting_since: float | None = None
        while self.pending or self.inflight:
            for _ in self.actors.poll():
                self._replace()
            self._submit()
            if not self.inflight:
                if not self.actors.starting():
                    self._give_up(f"no live Ray actor ({self.actors.last_failure or 'none could start'})")
                    break
                waiting_since = waiting_since or time.monotonic()
                if time.monotonic() - waiting_since > self.cfg.actor_start_timeout_s:
                    self._give_up(self._no_actor_reason())
                    break
                ray.wait([m.ready_ref for m in self.actors.starting()], num_returns=1, timeout=POLL_S)
                continue
            waiting_since = None
            refs = list(self.inflight)
            done, rest = ray.wait(refs, num_returns=1, timeout=POLL_S)
            if done and rest:
                more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
                done += more
            for ref in done:
                if ref in self.inflight:
                    self._collect(ref)
            self._expire_overrunning()
        return [r or RewardResult.unscorable("ray_pool: sample was never scored") for r in self.out]

    # -- steps ---------------------------------------------------------------------------------------
    def _submit(self) -> None:
        ready = self.actors.ready()
        if not ready:
            return
        depth = math.ceil(self.max_in_flight / len(ready))
        while self.pending and len(self.inflight) < self.max_in_flight:
            member = min(ready, key=lambda m: len(m.queue))
            if len(member.queue) >= depth:
                return
            chunk = self.pending.popleft()
            texts, rows = [self.texts[i] for i in chunk.indices], [self.rows[i] for i in chunk.indices]
            ref = member.handle.score.remote(texts, rows)
            if not member.queue:
                member.head_since = time.monotonic()
            member.queue.append(ref)
            self.inflight[ref] = (chunk, member)

    def _collect(self, ref: Any) -> None:
        import ray
        from ray.exceptions import RayActorError, RayTaskError

        chunk, member = self.inflight.pop(ref)
        if ref in member.queue:
            member.queue.remove(ref)
            member.head_since = time.monotonic()
        try:
            results = ray.get(ref)
        except Exception as exc:
            if isinstance(exc, RayTaskError) and not isinstance(exc, RayActorError):
                # the reward itself raised inside the actor: deterministic, so a rerun would raise again
                failed = RewardResult.unscorable(f"internal error on Ray actor: {_short(exc)}")
                self._settle(chunk, [failed] * chunk_len(chunk))
            else:  # actor, worker or node lost; a result object lost with its node
                self._lost(chunk, member, f"{type(exc).__name__} on node {_node(member)}: {_short(exc)}")
            return
        if not isinstance(results, list) or len(results) != chunk_len(chunk):
            got = len(results) if isinstance(results, list) else type(results).__name__
            reason = f"internal error: Ray actor returned {got} results for {chunk_len(chunk)} samples"
            self._settle(chunk, [RewardResult.unscorable(reason)] * chunk_len(chunk))
            return
        self._settle(chunk, results)

    def _expire_overrunning(self) -> None:
        now = time.monotonic()
        for member in list(self.actors.ready()):
            if member.queue and now - member.head_since > self.cfg.chunk_timeout_s:
                head = self.inflight.get(member.queue[0])
                if head is not None:
                    reason = f"chunk ran past chunk_timeout_s={self.cfg.chunk_timeout_s:g} on node {_node(member)}"
                    self._lost(head[0], member, reason)

    def _lost(self, chunk: Chunk, member: Member, reason: str) -> None:
        """``chunk`` failed with its actor: retire the actor, requeue what it held, start a replacement."""
        logger.warning("ray_pool: %s; rerunning its chunks on live actors", reason)
        queued = [self.inflight.pop(ref)[0] for ref in list(member.queue) if ref in self.inflight]
        queued = [c for c in queued if c is not chunk]
        member.queue.clear()
        self.actors.retire(member, reason)
        chunk.attempts += 1
        if chunk.attempts > self.cfg.max_retries:
            failed = f"ray_pool: chunk failed {chunk.attempts} times; last: {reason}"
            self._settle(chunk, [RewardResult.unscorable(failed)] * chunk_len(chunk))
        else:
            self.pending.appendleft(chunk)
        self.pending.extendleft(reversed(queued))  # queued behind it, never started: no attempt counted
        self._replace()

    def _replace(self) -> None:
        if self.replacements_left > 0 and len(self.actors.members) < self.cfg.num_actors:
            self.replacements_left -= 1
            self.actors.start()

    def _settle(self, chunk: Chunk, results: list[RewardResult]) -> None:
        for i, result in zip(chunk.indices, results, strict=True):
            self.out[i] = result

    def _give_up(self, reason: str) -> None:
        for ref, (chunk, _member) in list(self.inflight.items()):
            self.inflight.pop(ref)
            self.pending.append(chunk)
        while self.pending:
            chunk = self.pending.popleft()
            self._settle(chunk, [RewardResult.unscorable(f"ray_pool: {reason}")] * chunk_len(chunk))

    def _no_actor_reason(self) -> str:
        cause = self.actors.last_failure or (
            f"the cluster has no free resources for an actor with num_cpus={self.cfg.actor_num_cpus:g}"
        )
        return f"no Ray actor became ready within {self.cfg.actor_start_timeout_s:g}s ({cause})"


def chunk_len(chunk: Chunk) -> int:
    return len(chunk.indices)


def _node(member: Member) -> str:
    return (member.node_id or "?")[:8]


def _short(exc: BaseException, limit: int = 300) -> str:
    """One line for a reason: the innermost ``SomeError: message`` of a Ray traceback when there is one (the
    cause a person needs, e.g. why the reward could not be built on a node), else the message itself."""
    text = _ANSI.sub("", str(exc))
    causes = _CAUSE.findall(text)
    text = f"{causes[-1][0]}: {causes[-1][1].strip()}" if causes else " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CAUSE = re.compile(r"^\s*(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.+)$", re.MULTILINE)
