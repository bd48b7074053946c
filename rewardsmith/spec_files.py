"""Reward spec files as untrusted documents: read once, file references confined, named imports refused.

A spec file is often someone else's (a shared recipe, a downloaded config). Two of its fields reach beyond the
document, and both are checked on the whole document before any reward is built:

- **file references** (``template``, ``constitution`` and any ``*_file`` key, at any depth: gates, routes and
  weighted sums nest specs): a judge reward sends its template's text to the spec's own endpoint, so a spec naming
  ``/etc/shadow`` or ``../../.ssh/id_ed25519`` as a template would exfiltrate it. A reference must be a relative
  path that stays inside the spec file's folder after ``..`` and symlinks are resolved; it is rewritten to that
  absolute path, so it means the same file whatever the working directory. A bare name (``template: rubric``) is a
  packaged template and is left as it is.
- **imports** (``pydantic_model: "pkg.mod:Model"``): importing a module runs its code, and a spec's folder (or the
  working directory) may hold an ``evil.py``. A spec may name a model in a module the process has *already*
  imported (nothing new runs); importing anything else needs the caller's explicit ``allow_imports=True``. Reward
  names themselves resolve through the registry (built-ins and installed entry points) and import nothing new.

Every refusal is one :class:`~rewardsmith.reward.ConfigError` naming the file and the field
(``rewards.yaml: rewards.0.config.template: '/etc/shadow' is an absolute path; ...``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rewardsmith.reward import ConfigError
from rewardsmith.sample_files import sample_path
from rewardsmith.yaml_files import read_yaml_file

#: Keys whose string value names a file (besides any key ending in ``_file``).
FILE_KEYS = frozenset({"template", "constitution"})
#: Keys whose value is a ``module:attr`` import path.
IMPORT_KEYS = frozenset({"pydantic_model"})


def read_spec_file(path: str | os.PathLike[str], *, allow_imports: bool = False, what: str = "reward spec file") -> Any:
    """The document of a spec file (``samples:NAME`` for a bundled one), its file references confined to its folder
    and its imports checked. Every file that holds reward specs is read here (``what`` names it in errors: a verl
    mapping file, a shadow spec), so no adapter reads one with fewer checks."""
    path = sample_path(path)
    document = read_yaml_file(path, what)
    return confine_spec(document, path.parent, source=str(path), allow_imports=allow_imports)


def confine_spec(document: Any, base_dir: str | Path, *, source: str, allow_imports: bool = False) -> Any:
    """A copy of ``document`` whose file references are absolute paths inside ``base_dir`` (see the module doc)."""
    root = Path(base_dir).resolve()
    return _walk(document, (), root, source, allow_imports)


def _walk(value: Any, where: tuple[str, ...], root: Path, source: str, allow_imports: bool) -> Any:
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            here = (*where, str(key))
            if isinstance(item, str) and _is_file_key(key):
                item = _confined(item, key, here, root, source)
            elif isinstance(item, str) and key in IMPORT_KEYS and not allow_imports:
                _check_import(item, here, source)
            else:
                item = _walk(item, here, root, source, allow_imports)
            out[key] = item
        return out
    if isinstance(value, list):
        return [_walk(item, (*where, str(i)), root, source, allow_imports) for i, item in enumerate(value)]
    return value


def _is_file_key(key: Any) -> bool:
    return isinstance(key, str) and (key in FILE_KEYS or key.endswith("_file"))


def _confined(value: str, key: str, where: tuple[str, ...], root: Path, source: str) -> str:
    field = ".".join(where)
    if key == "template" and not any(ch in value for ch in "/\\~") and not Path(value).suffix:
        return value  # a packaged template's name
    if key == "constitution" and not any(ch in value for ch in "/\\~") and not Path(value).suffix:
        return value  # a bundled constitution's name
    if value.startswith("~") or Path(value).is_absolute() or (len(value) > 1 and value[1] == ":"):
        raise ConfigError(
            f"{source}: {field}: {value!r} is an absolute path; a spec may only name files in its own folder "
            f"({root}), as a path relative to it"
        )
    target = (root / value).resolve()
    if not target.is_relative_to(root):
        raise ConfigError(
            f"{source}: {field}: {value!r} leads outside the spec's folder ({root}) through '..' or a symlink; "
            "a spec may only name files in its own folder"
        )
    if not target.is_file():
        raise ConfigError(f"{source}: {field}: no such file {value!r} in the spec's folder ({root})")
    return str(target)


def _check_import(value: str, where: tuple[str, ...], source: str) -> None:
    module = value.partition(":")[0]
    if module and module in sys.modules:
        return  # already imported: naming it runs no new code
    raise ConfigError(
        f"{source}: {'.'.join(where)}: {value!r} would import module {module!r} while reading the spec, and "
        "importing runs its code; import it in your own script first, or load the spec with allow_imports=True"
    )
