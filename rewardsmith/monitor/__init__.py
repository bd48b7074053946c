"""Reward-hacking signals while training: a shadow verifier and trend tests over the step's completions.

``HackMonitor(shadow=...)`` wraps the training reward (:meth:`HackMonitor.watch`) so that it sees every scored batch;
every ``every`` batches it scores a sample with the shadow verifier and tests the signals of :mod:`.signals`,
logging them through TRL's ``log_metric``. :class:`rewardsmith.monitor.trl.HackMonitorCallback` adds them to the
trainer's logs and stops training on an alarm when asked.
"""

from rewardsmith.monitor.config import MonitorConfig
from rewardsmith.monitor.monitor import Alarm, HackMonitor, WatchedReward

__all__ = ["Alarm", "HackMonitor", "MonitorConfig", "WatchedReward"]
