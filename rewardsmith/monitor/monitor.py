"""The monitor: watch the training reward's batches, shadow-score a sample, test the signals, raise alarms.

The watched reward returns exactly what the training reward returns; everything the monitor does happens after, and
a failure inside the monitor is logged and skipped (it never raises into the trainer).
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rewardsmith.monitor import signals
from rewardsmith.monitor.config import MonitorConfig
from rewardsmith.monitor.patterns import answer_key, attack_pattern, is_hedged
from rewardsmith.monitor.sequential import ECusum, log_threshold
from rewardsmith.monitor.signals import Observation
from rewardsmith.types import completion_text, prompt_text

logger = logging.getLogger(__name__)
#: keyword arguments TRL passes that are not dataset columns
_TRAINER_KWARGS = {"trainer_state", "log_extra", "log_metric", "environments"}
#: the tested quantities: each group's share, the unit of the test's e-CUSUM
_UNITS = {"divergence": signals.divergence_share, "precision": signals.rejected_paid_share}


@dataclass(frozen=True)
class Alarm:
    signal: str
    step: int
    check: int
    message: str


class HackMonitor:
    """Shadow-checks the training reward every ``every`` scored batches (see :class:`MonitorConfig`)."""

    def __init__(self, config: MonitorConfig | Mapping[str, Any] | None = None, /, **options: Any) -> None:
        from rewardsmith.compose import build_reward

        data = {**(config.model_dump() if isinstance(config, MonitorConfig) else dict(config or {})), **options}
        self.config = MonitorConfig.model_validate(data)
        self.shadow = build_reward(self.config.shadow)
        self.format_check = build_reward(self.config.format_reward) if self.config.format_reward else None
        self.observations: list[Observation] = []
        self.alarms: list[Alarm] = []
        self.history: list[dict[str, float]] = []
        self.latest: dict[str, float] = {}
        self._batches = 0
        self._checks = 0
        self._rng = random.Random(self.config.seed)
        cfg = self.config
        self._tests = {"divergence": ECusum(cfg.tolerance), "precision": ECusum(1.0 - cfg.min_precision)}
        self._log_threshold = log_threshold(cfg.alpha, cfg.horizon, len(self._tests))
        self._lock = threading.Lock()

    @property
    def alarmed(self) -> bool:
        return bool(self.alarms)

    def watch(self, reward: Any) -> WatchedReward:
        """``reward`` as a TRL reward function that feeds this monitor."""
        return WatchedReward(reward, self)

    # -- one scored batch --------------------------------------------------------------------------------
    def observe(self, completions: list[Any], scores: list[float | None], kwargs: Mapping[str, Any]) -> None:
        """Record a batch the training reward scored; run a check when one is due. Never raises."""
        try:
            with self._lock:
                self._batches += 1
                if (self._batches - 1) % self.config.every:
                    return
                self._check(completions, scores, kwargs)
        except Exception:
            logger.warning("reward monitor: check skipped after an error", exc_info=True)

    def _sample(self, prompts: list[Any], n: int) -> list[int]:
        """Indices of whole groups (consecutive completions of one prompt), at most ``sample`` completions."""
        groups: list[list[int]] = []
        for i in range(n):
            key = prompt_text(prompts[i]) if prompts else None
            if groups and key is not None and key == prompt_text(prompts[groups[-1][0]]):
                groups[-1].append(i)
            else:
                groups.append([i])
        self._rng.shuffle(groups)
        chosen: list[int] = []
        for group in groups:
            if chosen and len(chosen) + len(group) > self.config.sample:
                break
            chosen += group
        return sorted(chosen)

    def _check(self, completions: list[Any], scores: list[float | None], kwargs: Mapping[str, Any]) -> None:
        cfg = self.config
        n = len(completions)
        prompts = list(kwargs.get("prompts") or [])
        picked = self._sample(prompts, n)
        columns = {
            k: [v[i] for i in picked]
            for k, v in kwargs.items()
            if k not in _TRAINER_KWARGS and isinstance(v, (list, tuple)) and len(v) == n
        }
        chosen = [completions[i] for i in picked]
        shadow = self.shadow.details(chosen, **columns)
        fmt = self.format_check.details(chosen, **columns) if self.format_check else None
        state = kwargs.get("trainer_state")
        step = int(getattr(state, "global_step", self._batches - 1) or 0)
        check = self._checks
        self._checks += 1
        group_of: dict[str | None, int] = {}
        for i in picked:
            key = prompt_text(prompts[i]) if prompts else str(i)
            group_of.setdefault(key, len(group_of))
        for j, i in enumerate(picked):
            text = completion_text(completions[i]) or ""
            score = scores[i]
            s = shadow[j].score
            f = fmt[j].score if fmt is not None else None
            self.observations.append(
                Observation(
                    check=check,
                    step=step,
                    group=group_of[prompt_text(prompts[i]) if prompts else str(i)],
                    length=len(text),
                    train_score=score,
                    train_pass=score is not None and score >= cfg.train_threshold,
                    shadow_pass=None if s is None else s >= cfg.shadow_threshold,
                    format_pass=None if f is None else f >= 1.0,
                    hedged=is_hedged(text),
                    attack=attack_pattern(text),
                    answer=answer_key(text),
                )
            )
        self._evaluate(step, check, kwargs.get("log_metric"))

    def _evaluate(self, step: int, check: int, log_metric: Any) -> None:
        cfg = self.config
        first = check - cfg.window + 1
        self.observations = [o for o in self.observations if o.check >= first]
        window = self.observations
        current = [o for o in window if o.check == check]
        levels = [*signals.precision_recall(window), signals.divergence(window)]
        shapes = signals.forms(window, level=cfg.collapse_level)
        metrics: dict[str, float] = {}
        raised: list[Alarm] = []
        for name, test in self._tests.items():
            evidence = test.update(signals.group_shares(current, _UNITS[name]), at=check) / self._log_threshold
            metrics[f"monitor/{name}_evidence"] = max(0.0, evidence)
            if evidence >= 1.0:
                raised.append(Alarm(name, step, check, self._message(name, test.since, window)))
        for sig in (*levels, *shapes):
            if sig.value is not None:
                metrics[f"monitor/{sig.name}"] = float(sig.value)
            if sig.low is not None and sig.high is not None:  # set together (one interval)
                metrics[f"monitor/{sig.name}_low"], metrics[f"monitor/{sig.name}_high"] = sig.low, sig.high
        for alarm in raised:
            if not any(a.signal == alarm.signal for a in self.alarms):
                logger.warning("reward hacking alarm at step %d: %s", step, alarm.message)
            self.alarms.append(alarm)
        metrics["monitor/alarm"] = float(bool(raised))
        metrics["monitor/alarm_count"] = float(len(self.alarms))
        metrics["monitor/checked"] = float(len(current))
        self.latest = metrics
        self.history.append({"step": float(step), **metrics})
        if callable(log_metric):
            for name, value in metrics.items():
                log_metric(name, value)

    def _message(self, name: str, since: int, window: list[Observation]) -> str:
        """The alarm in words, over the checks since the test's evidence began (within the window): the level with
        its interval, the budget it was tested at, and the forms the paid-but-rejected completions take."""
        cfg = self.config
        recent = [o for o in window if o.check >= since] or window
        span = f"over checks {recent[0].check}-{recent[-1].check}"
        sig = {s.name: s for s in [*signals.precision_recall(recent), signals.divergence(recent)]}[name]
        interval = f"{sig.value or 0.0:.0%} [{sig.low or 0.0:.0%}, {sig.high or 0.0:.0%}]"
        budget = f"{cfg.alpha:.0%} false alarms in {cfg.horizon} checks"
        shape = signals.describe_forms(signals.forms(recent, level=cfg.collapse_level), recent, ratio=cfg.length_ratio)
        if name == "precision":
            return (
                f"precision of the training reward vs the shadow is {interval} {span}: it pays for answers the shadow "
                f"rejects (sequential test against precision >= {cfg.min_precision:.0%} at {budget}){shape}"
            )
        return (
            f"the training reward pays {interval} of checked completions that the shadow rejects {span} "
            f"(sequential test against a tolerated {cfg.tolerance:.0%} at {budget}){shape}"
        )

    def first_alarm_step(self) -> int | None:
        return self.alarms[0].step if self.alarms else None


class WatchedReward:
    """A training reward that reports each scored batch to a :class:`HackMonitor`; scores pass through unchanged."""

    def __init__(self, reward: Any, monitor: HackMonitor) -> None:
        self.reward, self.monitor = reward, monitor
        self.__name__ = getattr(reward, "__name__", type(reward).__name__)

    def __call__(self, completions: Any, **kwargs: Any) -> list[float | None]:
        scores = self.reward(completions, **kwargs)
        self.monitor.observe(list(completions), list(scores), kwargs)
        return scores
