"""Reward-hacking signals while training: a shadow verifier and sequential tests over the checked completions.

``HackMonitor(shadow=...)`` wraps the training reward (:meth:`HackMonitor.watch`) so that it sees every scored batch;
every ``every`` batches it scores a sample with the shadow verifier and adds the check's evidence that the reward
pays what the shadow rejects to two sequential tests (:mod:`.sequential`) whose false alarms over a whole run stay
within a stated budget (:class:`MonitorConfig`); the signals (:mod:`.signals`) are logged through TRL's
``log_metric``. :class:`rewardsmith.monitor.trl.HackMonitorCallback` adds them to the
trainer's logs and stops training on an alarm when asked.
"""

from rewardsmith.monitor.config import MonitorConfig
from rewardsmith.monitor.monitor import Alarm, HackMonitor, WatchedReward

__all__ = ["Alarm", "HackMonitor", "MonitorConfig", "WatchedReward"]
