"""The JSONL metrics log of a training run, cut back to the resumed step on resume."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from tqdm import tqdm


class ResumePoint(Protocol):
    """Where a resumed run picks up (a checkpoint's :class:`~rewardsmith.adapters.mini.checkpoints.Resumed`).

    Read-only members, so a dataclass holding a ``list`` history (or any sequence) matches.
    """

    @property
    def step(self) -> int: ...
    @property
    def history(self) -> Sequence[dict[str, float]]: ...
    @property
    def elapsed_s(self) -> float: ...
    @property
    def cpu_s(self) -> float: ...


class MetricsLog:
    """Step metrics to a jsonl file (appended, flushed each line) and to a tqdm bar.

    A fresh run empties the file. A resumed run (``resumed`` given) keeps the records up to the checkpoint's
    step, cuts the ones logged after it (those steps are trained again), appends from there, and carries the
    checkpoint's wall and CPU clocks on.
    """

    def __init__(
        self, path: str | None, total: int, desc: str, progress: bool = True, resumed: ResumePoint | None = None
    ) -> None:
        self.path = Path(path) if path else None
        done = resumed.step if resumed else 0
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if resumed is None or not self.path.exists():
                self.path.write_text("")
            else:
                truncate_log(self.path, done)
        self.bar = tqdm(total=total, initial=done, desc=desc, unit="step", disable=not progress)
        elapsed, cpu = (resumed.elapsed_s, resumed.cpu_s) if resumed else (0.0, 0.0)
        self.start, self.cpu_start = time.perf_counter() - elapsed, time.process_time() - cpu
        self.history: list[dict[str, float]] = list(resumed.history) if resumed else []

    def clocks(self) -> tuple[float, float]:
        """Wall and CPU seconds of the run so far (across resumes)."""
        return time.perf_counter() - self.start, time.process_time() - self.cpu_start

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        elapsed, cpu = self.clocks()
        record = {
            "step": step,
            "elapsed_s": round(elapsed, 4),
            "cpu_s": round(cpu, 4),  # this process's CPU time (all threads)
            **metrics,
        }
        self.history.append(record)
        if self.path:
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record) + "\n")
        shown = {k: f"{v:.4g}" for k, v in metrics.items() if k in ("loss", "reward", "accuracy")}
        self.bar.set_postfix(shown)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def truncate_log(path: Path, last_step: int) -> None:
    """Cut a jsonl metrics log right after the record of ``last_step`` (also drops a torn last line)."""
    keep = 0
    with path.open("rb") as fh:
        for line in fh:
            try:
                record = json.loads(line) if line.endswith(b"\n") else None
            except ValueError:
                record = None
            if not isinstance(record, dict) or int(record.get("step", last_step + 1)) > last_step:
                break
            keep += len(line)
    with path.open("r+b") as fh:
        fh.truncate(keep)
