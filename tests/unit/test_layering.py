"""The layering rule of DESIGN.md §2, checked on the imports of every flintlock module.

The rule (the package ``__init__.py`` docstrings, issue 19): dependencies point one way,
``common`` ← ``runtime/{network,state,checkpoint}`` ← ``runtime/tasks`` ←
``runtime/{taskmanager,jobmanager}`` ← ``spark``, ``cli``, ``rest``; ``datastream`` builds
graphs without runtime internals. ``ALLOWED`` below writes it once, as data: each layer (a
package or module prefix) and the prefixes it may import. A module belongs to the layer with
the longest matching prefix; importing from one's own layer is always allowed.

What counts as an import: every ``import``/``from ... import`` in a module, at module level
and inside functions and classes alike (a lazy import is still a dependency). ``from p import
x`` is an edge to ``p.x`` when ``p.x`` is a module, else to ``p``. Importing ``a.b.c`` also
runs ``a/__init__`` and ``a/b/__init__``; those implicit edges are not counted (every module
would otherwise sit in a circle with its package's re-exports).

``if TYPE_CHECKING:`` imports count for the layering (a type from a higher layer is still a
dependency on it) but not for circles (they never run, so they cannot form an import cycle).

Known breaks of today are listed in ``KNOWN_VIOLATIONS`` and ``KNOWN_CYCLES`` (issue 19). The
test fails on a break not in the lists and on a listed one that no longer exists, so the lists
only shrink. docs/internals/layers.md explains the rule for readers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import flintlock

ROOT = Path(flintlock.__file__).parent

_RUNTIME_LEAVES = (  # I/O-free or socket-level helpers both sides of the control plane use
    "flintlock.runtime.auth",
    "flintlock.runtime.admission",
    "flintlock.runtime.liveness",
    "flintlock.runtime.heartbeat",
    "flintlock.runtime.cancellation",
    "flintlock.runtime.tls",
    "flintlock.runtime.execution_state",
    "flintlock.runtime.metrics",
)
_CONTROL = (  # the control plane shared by the JobManager and the TaskManagers
    *_RUNTIME_LEAVES,
    "flintlock.runtime.rpc",
    "flintlock.runtime.messages",
    "flintlock.runtime.restart",
    "flintlock.runtime.enumerators",
)
_CONNECTION_HELPERS = (  # socket-level, below both planes: handshake, admission, TLS, liveness
    "flintlock.runtime.auth",
    "flintlock.runtime.admission",
    "flintlock.runtime.tls",
    "flintlock.runtime.liveness",
)
_BASE = ("flintlock.common", "flintlock.graph", "flintlock.usercode")
_DATA_PLANE = (
    "flintlock.runtime.network", "flintlock.runtime.state", "flintlock.runtime.checkpoint",
)

# Layer (module prefix) -> prefixes it may import. Layers not named here are a bug of the map.
ALLOWED: dict[str, tuple[str, ...]] = {
    "flintlock.common": (),
    "flintlock.usercode": ("flintlock.common",),
    "flintlock.graph": ("flintlock.common",),
    "flintlock.datastream": ("flintlock.common", "flintlock.graph"),
    # the Table API and SQL: plans onto the DataStream API (DESIGN.md §8); nothing below imports it
    "flintlock.table": ("flintlock.common", "flintlock.datastream"),
    "flintlock.runtime.network": (
        "flintlock.common", "flintlock.runtime.state.keygroups", *_CONNECTION_HELPERS,
    ),
    "flintlock.runtime.state": ("flintlock.common",),
    "flintlock.runtime.checkpoint": (
        *_BASE, "flintlock.runtime.network", "flintlock.runtime.state", *_RUNTIME_LEAVES,
    ),
    # the barrier handlers' old public entry point: re-exports the worker side's handlers,
    # which moved to runtime/tasks/checkpointing (issue 29); nothing else imports upwards
    "flintlock.runtime.checkpoint.alignment": (
        "flintlock.common", "flintlock.runtime.network.barriers",
        "flintlock.runtime.checkpoint.failure", "flintlock.runtime.tasks.checkpointing",
    ),
    # the runtime's leaves, each with what it may import (issue 29): the I/O-free helpers
    # import nothing of the runtime, TLS only the handshake's auth
    "flintlock.runtime.auth": ("flintlock.common",),
    "flintlock.runtime.admission": ("flintlock.common",),
    "flintlock.runtime.liveness": ("flintlock.common",),
    "flintlock.runtime.heartbeat": ("flintlock.common",),
    "flintlock.runtime.cancellation": ("flintlock.common",),
    "flintlock.runtime.execution_state": ("flintlock.common",),
    "flintlock.runtime.tls": ("flintlock.common", "flintlock.runtime.auth"),
    # the control plane's vocabulary: what the JobManager and TaskManagers send each other
    "flintlock.runtime.messages": (
        *_BASE, "flintlock.runtime.checkpoint", "flintlock.runtime.network",
        "flintlock.runtime.rpc", "flintlock.runtime.execution_state", "flintlock.runtime.metrics",
    ),
    # restart strategies: which failures are permanent is known from checkpoint and state errors
    "flintlock.runtime.restart": (
        "flintlock.common", "flintlock.runtime.checkpoint", "flintlock.runtime.state",
    ),
    "flintlock.runtime.rpc": ("flintlock.common", *_RUNTIME_LEAVES),
    "flintlock.runtime.metrics": ("flintlock.common",),
    "flintlock.runtime.tasks": (*_BASE, *_DATA_PLANE, *_RUNTIME_LEAVES),
    "flintlock.runtime.taskmanager": (
        *_BASE, *_DATA_PLANE, *_CONTROL,
        "flintlock.runtime.tasks", "flintlock.runtime.task_metrics",
    ),
    # the TaskManager's metric sampling: reads the data plane's counters into metric reports
    "flintlock.runtime.task_metrics": (
        *_BASE, *_DATA_PLANE, *_RUNTIME_LEAVES, "flintlock.runtime.tasks",
    ),
    "flintlock.runtime.jobmanager": (
        *_BASE, "flintlock.runtime.state", "flintlock.runtime.checkpoint", *_CONTROL,
    ),
    # the top-level runtime modules not named above: auth, messages, rpc helpers, executor
    "flintlock.runtime": (*_BASE, "flintlock.runtime"),
    "flintlock.runtime.rest": ("flintlock.common", "flintlock.runtime"),
    # spark also preloads the user API in the Python daemon its workers fork from (daemon.py)
    "flintlock.spark": (*_BASE, "flintlock.runtime", "flintlock.datastream"),
    "flintlock.testing": ("flintlock",),
    "flintlock.cli": ("flintlock",),
    "flintlock.examples": ("flintlock.common", "flintlock.datastream"),
    "flintlock.metrics": ("flintlock.common", "flintlock.runtime.metrics"),
    "flintlock": ("flintlock",),  # the root package's own __init__
}


@dataclass(frozen=True, order=True)
class Edge:
    """``source`` imports ``target`` (dotted module names); ``typing_only`` under TYPE_CHECKING."""

    source: str
    target: str
    typing_only: bool = False


def module_name(path: Path, root: Path) -> str:
    """The dotted name of ``path``, a file under the package directory ``root``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def discover(root: Path) -> dict[str, Path]:
    """Every module of the package at ``root``, by dotted name."""
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(
    nodes: Iterable[ast.AST], typing_only: bool = False,
) -> Iterable[tuple[ast.stmt, bool]]:
    """Every import statement in ``nodes`` at any depth, and whether it is under TYPE_CHECKING."""
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, typing_only
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _imports(node.body, True)
            yield from _imports(node.orelse, typing_only)
        else:
            yield from _imports(ast.iter_child_nodes(node), typing_only)


def _resolve(source: str, is_package: bool, node: ast.stmt, known: Mapping[str, Path]) -> list[str]:
    """The modules of ``known`` that one import statement of ``source`` names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        package = source.split(".") if is_package else source.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([base] if base else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]


def import_edges(modules: Mapping[str, Path]) -> set[Edge]:
    """Every import of one module of ``modules`` by another (imports of other packages dropped)."""
    edges = set()
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        for node, typing_only in _imports([tree]):
            for target in _resolve(name, path.name == "__init__.py", node, modules):
                if target in modules and target != name:
                    edges.add(Edge(name, target, typing_only))
    return edges


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(module: str, allowed: Mapping[str, tuple[str, ...]]) -> str:
    """The layer of ``module``: the longest prefix of it that ``allowed`` names."""
    layers = [layer for layer in allowed if _within(module, layer)]
    if not layers:
        raise LookupError(f"{module} belongs to no layer of the map; add its package to ALLOWED")
    return max(layers, key=len)


def violations(
    edges: Iterable[Edge], allowed: Mapping[str, tuple[str, ...]],
) -> set[tuple[str, str]]:
    """The imports (source, target) whose target is outside what the source's layer may import."""
    broken = set()
    for edge in edges:
        layer = layer_of(edge.source, allowed)
        if layer_of(edge.target, allowed) == layer:
            continue
        if not any(_within(edge.target, ok) for ok in allowed[layer]):
            broken.add((edge.source, edge.target))
    return broken


def cycles(edges: Iterable[Edge]) -> set[frozenset[str]]:
    """The import circles: strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        if not edge.typing_only:
            graph.setdefault(edge.source, set()).add(edge.target)
            graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = set()
            while (member := stack.pop()) != node:
                component.add(member)
            component.add(node)
            if len(component) > 1:
                found.add(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


# ---------------------------------------------------------------------------------------------
# Today's breaks of the rule. Each one is issue 19's to remove; never add one here.

KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {
}

KNOWN_CYCLES: dict[frozenset[str], str] = {
}


def test_no_import_breaks_the_layering_rule() -> None:
    found = violations(import_edges(discover(ROOT)), ALLOWED)
    new = sorted(found - KNOWN_VIOLATIONS.keys())
    gone = sorted(KNOWN_VIOLATIONS.keys() - found)
    assert not new, f"imports against DESIGN.md §2 (see docs/internals/layers.md): {new}"
    assert not gone, f"fixed, so remove from KNOWN_VIOLATIONS: {gone}"


KNOWN_CYCLE_FAMILIES: dict[tuple[str, ...], str] = {  # circles matched by module prefix
}


def _in_family(cycle: frozenset[str], family: tuple[str, ...]) -> bool:
    return all(any(m == p or m.startswith(p + ".") for p in family) for m in cycle)


def test_no_new_import_circle() -> None:
    found = cycles(import_edges(discover(ROOT)))
    for family in KNOWN_CYCLE_FAMILIES:
        members = {c for c in found if _in_family(c, family)}
        assert members, f"fixed, so remove it from KNOWN_CYCLE_FAMILIES: {family}"
        found -= members
    new = sorted(sorted(c) for c in found - KNOWN_CYCLES.keys())
    gone = sorted(sorted(c) for c in KNOWN_CYCLES.keys() - found)
    assert not new, f"new import circles (see docs/internals/layers.md): {new}"
    assert not gone, f"changed or fixed, so update KNOWN_CYCLES: {gone}"


def test_the_checker_finds_a_wrong_import_and_a_new_circle(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "low").mkdir(parents=True)
    (package / "high").mkdir()
    files = {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "def f():\n    from pkg.high import b  # wrong way, hidden in a function\n",
        "low/c.py": "from . import d\n",
        "low/d.py": "from .c import X\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.high.b import Y\n",
        "high/__init__.py": "",
        "high/b.py": "import pkg.low.a\n",
    }
    for name, text in files.items():
        (package / name).write_text(text)
    allowed = {"pkg": (), "pkg.low": (), "pkg.high": ("pkg.low",)}

    edges = import_edges(discover(package))

    assert violations(edges, allowed) == {("pkg.low.a", "pkg.high.b"), ("pkg.low.d", "pkg.high.b")}
    assert cycles(edges) == {
        frozenset({"pkg.low.a", "pkg.high.b"}),
        frozenset({"pkg.low.c", "pkg.low.d"}),
    }


def test_every_module_belongs_to_a_layer() -> None:
    for module in discover(ROOT):
        assert layer_of(module, ALLOWED) in ALLOWED
