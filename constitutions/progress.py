"""Live run accounting for the pipelines: outcome counts, token cost and a progress bar with ETA."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from rewardsmith.judges.accounting import Accountant


class RunProgress:
    """Counts of outcomes plus a tqdm bar whose postfix shows them live."""

    def __init__(self, total: int, desc: str, accountant: Accountant | None = None, *, enabled: bool = True) -> None:
        from tqdm import tqdm

        self.counts: Counter[str] = Counter()
        self.accountant = accountant
        self._bar = tqdm(total=total, desc=desc, unit="item", disable=not enabled, dynamic_ncols=True)

    def add(self, outcome: str, advance: int = 1) -> None:
        self.counts[outcome] += 1
        self._bar.update(advance)
        self._bar.set_postfix(self.postfix(), refresh=False)

    def skip(self, count: int) -> None:
        """Items already finished by an earlier run."""
        self.counts["resumed"] += count
        self._bar.update(count)

    def postfix(self) -> dict[str, str]:
        fields = {key: str(self.counts[key]) for key in ("done", "dropped", "abstained", "failed")}
        if self.accountant is not None:
            report = self.accountant.report()
            tokens = report.prompt_tokens + report.completion_tokens
            fields["cost"] = f"{tokens / 1000:.1f}k tok ${report.cost_usd:.4f}"
        return fields

    def close(self) -> None:
        self._bar.close()


def describe_run(summary: Any, headline: str, details: Iterable[str] = ()) -> str:
    """A run summary as text: ``headline`` ending in the dropped counts and any failures, work resumed from an
    earlier run, ``details``, token usage and the files written (``summary`` has ``dropped``, ``failed``,
    ``resumed``, ``usage`` and ``outputs``)."""
    dropped = ", ".join(f"{reason} {count}" for reason, count in sorted(summary.dropped.items())) or "none"
    failed = f", {summary.failed} FAILED (rerun the same command to retry them)" if summary.failed else ""
    lines = [
        headline + dropped + failed,
        f"resumed from an earlier run: {summary.resumed}" if summary.resumed else "",
        *details,
        summary.usage,
        *(f"{name}: {path}" for name, path in summary.outputs.items()),
    ]
    return "\n".join(line for line in lines if line)
