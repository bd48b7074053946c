"""Batch dependency: which samples must be scored in the same call for a score to mean what it means.

Most rewards score each sample alone, so a transport may cut a batch anywhere. A group reward (a listwise judge,
a rank within a prompt's generations) scores a sample against the others of its group, and a batch reward
against the whole call: cut there, the scores change. A reward declares this with
:meth:`~rewardsmith.reward.Reward.batch_dependency` and :meth:`~rewardsmith.reward.Reward.groups`; transports that
split batches (serve, ``remote``, the Ray pool) cut only with :func:`chunk_plan`, which keeps every group whole.
Pure functions over index lists, so every transport cuts the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

#: ``None``: each sample alone; ``"group"``: the samples of its group; ``"batch"``: the whole call.
BatchDependency = Literal["group", "batch"] | None

_STRENGTH = {None: 0, "group": 1, "batch": 2}


def strongest(dependencies: Iterable[BatchDependency]) -> BatchDependency:
    """The dependency of a reward made of parts: a group part makes it group-dependent, a batch part batch."""
    return max(dependencies, key=lambda d: _STRENGTH[d], default=None)


def merge_groups(n: int, partitions: Iterable[Sequence[Sequence[int]]]) -> list[list[int]]:
    """The finest grouping of ``n`` samples that keeps every group of every partition whole (connected
    components), groups in order of their first sample; samples no partition names are groups of one."""
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for partition in partitions:
        for group in partition:
            for i in group[1:]:
                a, b = root(group[0]), root(i)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    merged: dict[int, list[int]] = {}
    for i in range(n):
        merged.setdefault(root(i), []).append(i)
    return list(merged.values())


def dependency_of(reward: Any) -> BatchDependency:
    """``reward``'s declared dependency; an object that declares none is taken to score samples alone."""
    declared = getattr(reward, "batch_dependency", None)
    return declared if declared in ("group", "batch") else None


def chunk_plan(reward: Any, rows: Sequence[Any], size: int, indices: Sequence[int] | None = None) -> list[list[int]]:
    """Indices of ``rows`` cut into chunks of at most ``size`` that never split one of ``reward``'s groups.

    ``indices`` (default all) are the samples to score; groups are formed over those rows only, as the reward
    would form them over the same call. A ``batch`` reward gets one chunk; a group larger than ``size`` is a
    chunk of its own. Chunks keep batch order inside, so a reward that groups adjacent rows sees the same runs.
    """
    todo = list(range(len(rows))) if indices is None else list(indices)
    if not todo:
        return []
    size = max(1, size)
    dependency = dependency_of(reward)
    if dependency is None:
        return [todo[i : i + size] for i in range(0, len(todo), size)]
    if dependency == "batch":
        return [todo]
    picked = [rows[i] for i in todo]
    chunks: list[list[int]] = []
    for group in reward.groups(picked):
        members = [todo[i] for i in group]
        if chunks and len(chunks[-1]) + len(members) <= size:
            chunks[-1].extend(members)
        else:
            chunks.append(members)
    return [sorted(chunk) for chunk in chunks]
