"""Load constitutions by bundled name or by path, and fingerprint them.

Bundled constitutions live in ``rewardsmith/constitutions/library/*.yaml`` (package data). The content
hash is computed from the validated, normalised content, so reformatting a file or editing its
comments does not change it, while any change to a principle does; it is recorded in every
dataset row the pipelines write.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

from rewardsmith.constitutions.schema import SLUG, Constitution, ConstitutionError, parse_constitution

LIBRARY = "library"


def bundled_names() -> list[str]:
    """Names of the constitutions shipped with rewardsmith."""
    folder = resources.files("rewardsmith.constitutions").joinpath(LIBRARY)
    return sorted(entry.name.removesuffix(".yaml") for entry in folder.iterdir() if entry.name.endswith(".yaml"))


def bundled_text(name: str) -> str:
    """The YAML text of a bundled constitution (a plain name: ``../x`` cannot reach other package files)."""
    if not SLUG.fullmatch(name):
        raise ConstitutionError(f"no bundled constitution {name!r}; bundled: {', '.join(bundled_names())}")
    entry = resources.files("rewardsmith.constitutions").joinpath(LIBRARY).joinpath(f"{name}.yaml")
    if not entry.is_file():
        raise ConstitutionError(f"no bundled constitution {name!r}; bundled: {', '.join(bundled_names())}")
    return entry.read_text(encoding="utf-8")


def load_constitution(name_or_path: str | Path) -> Constitution:
    """A bundled constitution by name (``helpful-harmless``) or a YAML file by path."""
    text, source = read_source(name_or_path)
    return parse_text(text, source)


def read_source(name_or_path: str | Path) -> tuple[str, str]:
    """``(yaml_text, source_label)`` for a bundled name or a path."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ConstitutionError(f"{path}: no such constitution file")
        return path.read_text(encoding="utf-8"), str(path)
    name = str(name_or_path)
    return bundled_text(name), f"{name} (bundled)"


def parse_text(text: str, source: str) -> Constitution:
    """Validate a constitution's YAML text; a YAML mistake is one line, ``source:line:column: not valid YAML: ...``.

    The text is read by the bounded reader (:mod:`rewardsmith.yaml_files`): a constitution is often someone
    else's file, and a deep or alias-bombed document must end in that one line, not a traceback.
    """
    from rewardsmith.reward import ConfigError
    from rewardsmith.yaml_files import read_yaml_text

    try:
        data = read_yaml_text(text, source)
    except ConfigError as exc:
        raise ConstitutionError(str(exc)) from None
    return parse_constitution(data, source)


def constitution_hash(constitution: Constitution) -> str:
    """``sha256:<16 hex>`` of the normalised content (stable across formatting and comments)."""
    canonical = json.dumps(constitution.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
