"""The one reader for YAML (and JSON) documents from files: bounded, and every mistake one line.

Reward specs, constitutions, criteria files, trainer configs and ``--config @FILE`` all come through here. PyYAML's
own exceptions print a dozen frames and two context marks and name ``<unicode string>`` when given text; a user
needs ``file:line:column: what is wrong``. The documents are also untrusted (a spec shared by someone else), so
the loader bounds what a short file can make the process do:

- nesting deeper than :data:`MAX_DEPTH` (PyYAML recurses, and would end in ``RecursionError``);
- an integer longer than :data:`MAX_INT_DIGITS` digits (Python refuses to convert it, with a bare ``ValueError``);
- aliases that expand to more than :data:`MAX_NODES` values (the "billion laughs": a few lines whose every reader,
  ``json.dumps`` or pydantic, walks the tree in full).

Each refusal is a :class:`~rewardsmith.reward.ConfigError` whose message starts with ``file:line:column``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewardsmith.reward import ConfigError
from rewardsmith.sample_files import sample_path

#: Deepest nesting of mappings and lists a config document may have.
MAX_DEPTH = 64
#: Longest integer literal (Python's own int-from-text limit is 4300 digits).
MAX_INT_DIGITS = 4000
#: Most values a document may hold once its aliases are expanded.
MAX_NODES = 1_000_000


def read_yaml_file(path: str | Path, what: str = "config file") -> Any:
    """The parsed document of a YAML (or JSON) file; a missing file or any syntax error is one line.

    ``what`` names the kind of file in the missing-file message (``no such reward spec file: x.yaml``);
    ``samples:NAME`` reads a bundled sample (:mod:`rewardsmith.sample_files`).
    """
    path = sample_path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such {what}: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text file ({exc.reason} at byte {exc.start})") from None
    return read_yaml_text(text, str(path))


def read_yaml_text(text: str, source: str) -> Any:
    """``text`` parsed as YAML, errors naming ``source`` (a file name) with line and column."""
    import yaml

    try:
        document = yaml.load(text, Loader=_bounded_loader())
    except yaml.YAMLError as exc:
        raise ConfigError(yaml_problem(source, exc)) from None
    except RecursionError:
        raise ConfigError(f"{source}: not valid YAML: nested too deeply") from None
    _check_expanded_size(document, source)
    return document


def yaml_problem(path: str | Path, exc: Exception) -> str:
    """``bad.yaml:3:7: not valid YAML: mapping values are not allowed here`` from a PyYAML error."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    return f"{where}: not valid YAML: {problem}" + (f" ({context})" if context else "")


_LOADER: Any = None


def _bounded_loader() -> Any:
    """A ``yaml.SafeLoader`` subclass that refuses deep nesting and long integers where it meets them."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    import yaml
    from yaml.composer import ComposerError
    from yaml.constructor import ConstructorError

    class BoundedLoader(yaml.SafeLoader):
        _depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    mark = self.peek_event().start_mark
                    raise ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep", mark)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_yaml_int(self, node: Any) -> Any:
            digits = sum(ch.isdigit() for ch in str(node.value))
            if digits > MAX_INT_DIGITS:
                raise ConstructorError(
                    None, None, f"an integer of {digits} digits (limit {MAX_INT_DIGITS})", node.start_mark
                )
            return super().construct_yaml_int(node)

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    _LOADER = BoundedLoader
    return _LOADER


def _check_expanded_size(document: Any, source: str) -> None:
    """Refuse a document whose aliases expand it past :data:`MAX_NODES` values (counted once per shared node)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(value: Any) -> int:
        if not isinstance(value, (dict, list)):
            return 1
        key = id(value)
        if key in open_nodes:
            raise ConfigError(f"{source}: a YAML alias refers to a value that contains it (an endless document)")
        if key not in sizes:
            open_nodes.add(key)
            children = [*value.keys(), *value.values()] if isinstance(value, dict) else value
            sizes[key] = min(MAX_NODES + 1, 1 + sum(size(child) for child in children))
            open_nodes.discard(key)
        return sizes[key]

    if size(document) > MAX_NODES:
        raise ConfigError(f"{source}: expands to more than {MAX_NODES:,} values (YAML aliases repeating aliases)")
