"""No import cycles in the package: the module import graph, built with ``ast`` over every file of every folder
pyproject.toml maps into ``rewardsmith``, is acyclic.

Every import counts: module-level, function-level (a cycle hidden in a function still ties the modules together
and breaks when the import order changes) and ``if TYPE_CHECKING:`` (a type checker follows those). An edge goes to
the module imported; ``from package import name`` goes to ``package.name`` when that is a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).parents[2]


def package_modules() -> dict[str, Path]:
    """``rewardsmith.judges.pairwise -> judges/pairwise.py`` for every module the wheel ships."""
    import tomllib  # Python 3.11+, like tests/core/test_packaging.py

    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    modules: dict[str, Path] = {}
    for package, folder in setuptools["package-dir"].items():
        root = REPO / folder
        for path in root.rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join([package, *parts])
            if name.rpartition(".")[0] in setuptools["packages"] or name in setuptools["packages"]:
                modules[name] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:
                    found.add(f"{source}.{alias.name}")
                elif source in modules:
                    found.add(source)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_graph_covers_the_package():
    graph = import_graph()
    assert {"rewardsmith.registry", "rewardsmith.judges.pointwise", "rewardsmith.adapters.mini.checkpoints"} <= set(
        graph
    )
    assert "rewardsmith.reward" in graph["rewardsmith.registry"]  # module-level edge
    # a function-level edge is seen too
    assert "rewardsmith.judges.clients.factory" in graph["rewardsmith.judges.clients.embedded"]


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


#: Cycles still to break, each with where: the only entries allowed, and each must still be a whole cycle.
KNOWN: set[tuple[str, ...]] = set()


def test_the_package_has_no_import_cycle():
    found = [c for c in cycles(import_graph()) if tuple(c) not in KNOWN]
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)
