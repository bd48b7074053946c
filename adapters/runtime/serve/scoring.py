"""Scoring a request, free of HTTP: the FastAPI app and a Ray Serve deployment both call these.

:func:`prepare` applies the in-process contract to a request's completions and columns (chat or plain text,
a non-text completion unscorable with its type) and refuses misaligned columns, which over HTTP are a caller
bug. :class:`ScoringJob` scores the samples ``chunk_size`` at a time, each chunk through the reward's sync
path in a scoring thread (never on the event loop, which only parses, routes and answers), and stops waiting
at the deadline: samples not finished by then come back ``None`` with the reason, never 0.
Work that overruns is left to finish (a thread cannot be killed) and :meth:`ScoringJob.settled` says when it
has, so capacity accounting stays honest.
"""

from __future__ import annotations

import asyncio
import functools
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.adapters.components import component_columns
from rewardsmith.adapters.options import unscorable_as
from rewardsmith.columns import rows_from_columns
from rewardsmith.groups import chunk_plan
from rewardsmith.reward import Reward, score_rows
from rewardsmith.types import RewardResult, completion_text, describe_non_text


class BadRequest(ValueError):
    """A request the server cannot score as sent (answered 4xx with this message)."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


def prepare(
    completions: Sequence[Any], columns: Mapping[str, Sequence[Any]]
) -> tuple[list[str | None], list[dict[str, Any]], list[RewardResult | None]]:
    """Texts, one row per sample and the answers known without the reward (non-text completions)."""
    texts: list[str | None] = []
    early: list[RewardResult | None] = []
    for completion in completions:
        try:
            text = completion_text(completion)
        except Exception:
            text = None
        texts.append(text)
        early.append(RewardResult.unscorable(describe_non_text(completion)) if text is None else None)
    rows = rows_from_columns(len(texts), dict(columns))
    misaligned = getattr(rows[0], "misaligned", None) if rows else None
    if misaligned:
        raise BadRequest("; ".join(misaligned.values()))
    if not rows and columns:
        bad = [f"column {k!r} has {len(v)} values for 0 completions" for k, v in columns.items() if len(v)]
        if bad:
            raise BadRequest("; ".join(bad))
    return texts, rows, early


class ScoringJob:
    """One request's samples in flight on one reward."""

    def __init__(
        self,
        reward: Reward,
        texts: list[str | None],
        rows: list[dict[str, Any]],
        early: list[RewardResult | None],
        chunk_size: int = 1,
    ) -> None:
        self.reward = reward
        self.results: list[RewardResult | None] = list(early)
        self.timings: list[float] = [0.0] * len(texts)
        todo = [i for i, answer in enumerate(early) if answer is None]
        # Never split one of the reward's groups (a group judge): chunks of whole groups, formed over the
        # samples the reward will see, as a local call forms them.
        chunks = chunk_plan(reward, rows, chunk_size, todo)
        self.tasks = [asyncio.ensure_future(self._score(chunk, texts, rows)) for chunk in chunks]
        #: the task scoring each sample (``None`` for samples answered early)
        self.task_of: list[asyncio.Future | None] = [None] * len(texts)
        for chunk, task in zip(chunks, self.tasks, strict=True):
            for i in chunk:
                self.task_of[i] = task

    async def _score(self, chunk: list[int], texts: list[str | None], rows: list[dict[str, Any]]) -> None:
        start = time.perf_counter()
        try:
            # The reward's sync path in a scoring thread, whatever the reward: async-native rewards (judges,
            # composites) drive their own private loop there, so no reward work ever runs on the serving loop.
            loop = asyncio.get_running_loop()
            picked_texts, picked_rows = [texts[i] for i in chunk], [rows[i] for i in chunk]
            scored = await loop.run_in_executor(None, score_rows, self.reward, picked_texts, picked_rows)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # score_rows guards families; this guards the guard
            scored = [RewardResult.unscorable(f"internal error: {type(exc).__name__}: {exc}") for _ in chunk]
        elapsed = time.perf_counter() - start
        for i, result in zip(chunk, scored, strict=True):
            self.results[i] = result
            self.timings[i] = elapsed

    async def wait(self, timeout_s: float, deadline_s: float | None = None) -> tuple[list[RewardResult], list[float]]:
        """Results at completion or after ``timeout_s``, whichever is first; unfinished samples are ``None``.

        ``deadline_s`` is the request's whole deadline, named in the reason (``timeout_s`` is what is left of
        it after waiting for a worker).
        """
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=max(0.0, timeout_s))
        deadline_s = timeout_s if deadline_s is None else deadline_s
        reason = f"deadline: not scored within {deadline_s:.3g} s"
        results = [r if r is not None else RewardResult.unscorable(reason) for r in self.results]
        timings = [t if r is not None else timeout_s for r, t in zip(self.results, self.timings, strict=True)]
        return results, timings

    @property
    def done(self) -> bool:
        return all(task.done() for task in self.tasks)

    async def settled(self, abandon_after_s: float) -> None:
        """Return once every chunk has finished; cancel whatever is still running after ``abandon_after_s``."""
        pending = [task for task in self.tasks if not task.done()]
        if not pending:
            return
        _, still = await asyncio.wait(pending, timeout=abandon_after_s)
        for task in still:
            task.cancel()
        if still:
            await asyncio.wait(still)


async def score(
    reward: Reward,
    completions: Sequence[Any],
    columns: Mapping[str, Sequence[Any]] | None = None,
    deadline_s: float = 120.0,
    chunk_size: int = 1,
) -> tuple[list[RewardResult], list[float]]:
    """Score one request to completion or deadline; the plain entry point for callers without admission."""
    texts, rows, early = prepare(completions, columns or {})
    job = ScoringJob(reward, texts, rows, early, chunk_size)
    return await job.wait(deadline_s)


# -- OpenRLHF ----------------------------------------------------------------------------------------------
def response_from_query(query: Any, prompt: Any, eos_markers: Sequence[str]) -> tuple[Any, str | None]:
    """The response inside OpenRLHF's ``query`` (= prompt + response), and a note when the prompt was not found.

    The prompt is stripped where the query starts with it, else after its first occurrence (a tokenizer may
    prepend a BOS marker on decode); when it is absent the whole query is scored and the reason says so.
    Trailing end-of-turn markers (decoded with special tokens kept) are removed.
    """
    if not isinstance(query, str):
        return query, None
    note = None
    response = query
    if isinstance(prompt, str) and prompt:
        if query.startswith(prompt):
            response = query[len(prompt) :]
        elif prompt in query:
            response = query[query.index(prompt) + len(prompt) :]
        else:
            note = "prompt not found in query; scored the whole query"
    return strip_eos(response, eos_markers), note


def strip_eos(text: str, eos_markers: Sequence[str]) -> str:
    """``text`` without the end-of-turn markers (and blanks between them) it ends with.

    Matched on the reversed text, one marker at a time from where the last one ended, so a query ending in
    thousands of markers costs time linear in its length (this runs on the event loop).
    """
    markers = [m for m in eos_markers if m]
    if not markers:
        return text
    trailing = _reversed_marker_pattern(tuple(markers))
    reversed_text = text[::-1]
    cut = 0  # characters removed from the end so far (blanks before a marker that is not stripped stay)
    while (found := trailing.match(reversed_text, cut)) is not None:
        cut = found.end()
    return text[: len(text) - cut]


@functools.lru_cache(maxsize=16)
def _reversed_marker_pattern(markers: tuple[str, ...]) -> re.Pattern[str]:
    """Blanks then one marker, read backwards (markers tried in the order given)."""
    return re.compile(r"\s*(?:" + "|".join(re.escape(m[::-1]) for m in markers) + ")")


def openrlhf_batch(
    query: Sequence[Any],
    prompts: Sequence[Any] | None,
    labels: Sequence[Any] | None,
    label_column: str | Sequence[str],
    eos_markers: Sequence[str],
    label_problem: str | None = None,
) -> tuple[list[Any], dict[str, list[Any]], list[str | None]]:
    """Completions, columns and per-sample notes from an OpenRLHF request.

    ``prompts`` become the ``prompt`` column; ``labels`` fill ``label_column`` (every one of several: a route's
    targets each read their own), or, when every label is a mapping, become one column per key (so a label can
    carry several columns). ``label_problem`` says why plain labels have no column for this reward: they are
    then refused with it rather than put where no part reads them.
    """
    n = len(query)
    for key, values in (("prompts", prompts), ("labels", labels)):
        if values is not None and len(values) != n:
            raise BadRequest(f"{key} has {len(values)} values for {n} queries")
    prompt_list = list(prompts) if prompts is not None else [None] * n
    completions, notes = [], []
    for q, p in zip(query, prompt_list, strict=True):
        response, note = response_from_query(q, p, eos_markers)
        completions.append(response)
        notes.append(note)
    columns: dict[str, list[Any]] = {}
    if prompts is not None:
        columns["prompt"] = prompt_list
    if labels is not None:
        if n and all(isinstance(label, Mapping) for label in labels):
            keys = list(dict.fromkeys(k for label in labels for k in label))
            for key in keys:
                columns[str(key)] = [label.get(key) for label in labels]
        elif label_problem and labels:
            raise BadRequest(label_problem, status=422)
        else:
            for column in [label_column] if isinstance(label_column, str) else label_column:
                columns[column] = list(labels)
    return completions, columns, notes


#: Prefix of a component's key in OpenRLHF's ``extra_logs``: OpenRLHF turns each key into an ``info`` entry of the
#: sample's experience, beside its own (``reward``, ``score``, ...), which a component must never overwrite.
COMPONENT_LOG_PREFIX = "component/"


def openrlhf_payload(
    results: Sequence[RewardResult],
    notes: Sequence[str | None],
    unscorable_score: float | None,
    components: Sequence[str] = (),
) -> dict[str, Any]:
    """OpenRLHF's response: numbers only where it reads numbers; an unscorable sample is flagged.

    Each of ``components`` (a weighted sum's parts: :mod:`rewardsmith.adapters.components`) is one more
    ``extra_logs`` key, ``component/<name>``, its unscorable values reported like an unscorable reward.
    """
    rewards = [unscorable_as(r.score, unscorable_score) for r in results]
    flags = [0.0 if r.score is not None else 1.0 for r in results]
    reasons = [f"{r.reason} ({note})" if note else r.reason for r, note in zip(results, notes, strict=True)]
    logs: dict[str, list[float]] = {"unscorable": flags}
    for name, values in component_columns(components, results).items():
        logs[COMPONENT_LOG_PREFIX + name] = [unscorable_as(v, unscorable_score) for v in values]
    return {"rewards": rewards, "scores": rewards, "extra_logs": logs, "reasons": reasons}
