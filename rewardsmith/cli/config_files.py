"""Config files read by the CLI (``--config @FILE``, ``train --config FILE``): a YAML mistake is one line.

PyYAML's exceptions print a dozen frames and two context marks; a user needs the file, the line and column and
what is wrong there, as ``serve --spec`` already says it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewardsmith.reward import ConfigError


def read_yaml_file(path: str | Path) -> Any:
    """The parsed document of a YAML (or JSON) file; a missing file or a syntax error raises one-line errors."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such config file: {path}")
    try:
        return yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(yaml_problem(path, exc)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text file ({exc.reason} at byte {exc.start})") from None


def yaml_problem(path: str | Path, exc: Exception) -> str:
    """``bad.yaml:3:7: not valid YAML: mapping values are not allowed here`` from a PyYAML error."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    return f"{where}: not valid YAML: {problem}" + (f" ({context})" if context else "")
