"""Harbor's verifier files: what a task's ``tests/test.sh`` leaves in ``/logs/verifier`` for Harbor to read.

Harbor 0.26 (``harbor/verifier/verifier.py``, ``Verifier.verify``) removes both reward files, runs
``tests/test.sh`` without looking at its exit status, then reads ``reward.json`` if it exists, else ``reward.txt``:
the JSON must be a flat object of finite numbers (``{"reward": 1.0}``; its viewer, uploader and ``jobs`` commands
read the key ``reward``; pass@k needs exactly one key), the text a single number. No file at all raises
``RewardFileNotFoundError``, which ``harbor/models/trial/error_policy.py`` classes as graded without a valid reward,
and ``harbor/job.py`` leaves trials without a valid reward out of the job's metrics. That is Harbor's way to say
"no measurement", so an unscorable sample writes no reward file (and removes one an earlier line of the script
may have left), never a 0.

The reason goes beside the reward, in ``reason.json`` (Harbor downloads the whole verifier folder into the trial's
logs, so it shows next to the reward): the reward, each term's score, weight and reason.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from rewardsmith.adapters.protocols.verdict import Verdict

#: Where Harbor mounts the verifier's log folder inside a task's container.
DEFAULT_VERIFIER_DIR = "/logs/verifier"
REWARD_JSON = "reward.json"
REWARD_TXT = "reward.txt"
REASON_JSON = "reason.json"


def write_verdict(verdict: Verdict, out_dir: str | os.PathLike[str]) -> Path | None:
    """Write ``reason.json`` and, when the sample scored, ``reward.json`` (and no ``reward.txt``); return the reward
    file or ``None``.

    The reason is written first and each file is replaced whole (written aside, then renamed), so a reader never
    sees a reward without its reason or half a file.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clear_rewards(out)  # first: if the reason cannot be written (a folder planted in its place), no number is left
    _write_json(out / REASON_JSON, verdict.as_record())
    reward = verdict.reward
    clear_rewards(out)  # a number an earlier line of the script left must not stand beside (or for) this verdict
    if reward is None:
        return None
    _write_json(out / REWARD_JSON, {"reward": reward})
    return out / REWARD_JSON


def clear_rewards(out_dir: str | os.PathLike[str]) -> None:
    """Remove both reward files, so that Harbor finds no number for a sample that has none.

    Whatever stands under either name goes, a folder included (a policy that can write the verifier folder may plant
    one so that the removal fails and its ``reward.txt`` beside it stands); both names are tried before the first
    failure is raised.
    """
    failure: OSError | None = None
    for name in (REWARD_JSON, REWARD_TXT):
        path = Path(out_dir) / name
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError as exc:
            failure = failure or exc
    if failure is not None:
        raise failure


def _write_json(path: Path, data: object) -> None:
    text = json.dumps(data, indent=2, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the file from a verifier running as another user
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["DEFAULT_VERIFIER_DIR", "REASON_JSON", "REWARD_JSON", "REWARD_TXT", "clear_rewards", "write_verdict"]
