"""The bundled sample files (``rewardsmith/samples/``), addressable from any directory as ``samples:NAME``.

The docs' worked examples (scoring, the reward audit) read rows and specs shipped inside the package. A path into
the repository works only from a checkout; ``samples:hack_math_rows.jsonl`` names the installed copy wherever the
command runs, and every reader of a data file or a YAML file accepts it (:func:`sample_path` is the one place that
resolves it). ``rewardsmith samples`` lists the names.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The prefix that marks a bundled sample instead of a path.
PREFIX = "samples:"
SAMPLES_DIR = Path(__file__).resolve().with_name("samples")


def sample_names() -> list[str]:
    """The bundled samples' names, as ``samples:NAME`` takes them."""
    return sorted(p.name for p in SAMPLES_DIR.iterdir() if p.is_file() and not p.name.startswith((".", "_")))


def sample_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a ``Path``; ``samples:NAME`` becomes the installed sample's absolute path.

    An unknown name raises ``FileNotFoundError`` listing the names there are (a name is a file name, never a path:
    ``samples:../x`` is unknown, not a way out of the folder).
    """
    text = os.fspath(path)
    if not isinstance(text, str) or not text.startswith(PREFIX):
        return Path(path)
    name = text[len(PREFIX) :]
    names = sample_names()
    if name not in names:
        raise FileNotFoundError(f"no bundled sample {name!r}: use one of {', '.join(PREFIX + n for n in names)}")
    return SAMPLES_DIR / name
