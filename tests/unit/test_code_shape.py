"""The runtime stays readable (issue 19): no module over ``MAX_MODULE_LINES`` lines, no function
over ``MAX_FUNCTION_LINES``. Today's exceptions are listed with their current size as a
ceiling: they may only shrink, and one that fits the rule must leave the list."""

from __future__ import annotations

import ast
from pathlib import Path

import flintlock

RUNTIME = Path(flintlock.__file__).parent / "runtime"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 40

KNOWN_LONG_MODULES: dict[str, int] = {  # issue 19: split each; never add one
}
KNOWN_LONG_FUNCTIONS: dict[str, int] = {  # issue 19: shorten each; never add one
}


def _modules() -> dict[str, Path]:
    return {str(p.relative_to(RUNTIME)): p for p in sorted(RUNTIME.rglob("*.py"))}


def _line_count(path: Path) -> int:
    return path.read_text().count("\n")


def _function_lengths(path: Path) -> dict[str, int]:
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                assert child.end_lineno is not None
                found[name] = child.end_lineno - child.lineno + 1
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(ast.parse(path.read_text()), "")
    return found


def test_no_runtime_module_grows_past_the_limit() -> None:
    sizes = {name: _line_count(path) for name, path in _modules().items()}
    too_long = {name: n for name, n in sizes.items()
                if n > max(MAX_MODULE_LINES, KNOWN_LONG_MODULES.get(name, 0))}
    assert not too_long, f"modules over {MAX_MODULE_LINES} lines (split them): {too_long}"
    fitting = sorted(name for name in KNOWN_LONG_MODULES
                     if sizes.get(name, 0) <= MAX_MODULE_LINES)
    assert not fitting, f"now within the limit, remove from KNOWN_LONG_MODULES: {fitting}"


def test_no_runtime_function_grows_past_the_limit() -> None:
    lengths = {f"{name}:{function}": n for name, path in _modules().items()
               for function, n in _function_lengths(path).items()}
    too_long = {name: n for name, n in lengths.items()
                if n > max(MAX_FUNCTION_LINES, KNOWN_LONG_FUNCTIONS.get(name, 0))}
    assert not too_long, f"functions over {MAX_FUNCTION_LINES} lines: {too_long}"
    fitting = sorted(name for name in KNOWN_LONG_FUNCTIONS
                     if lengths.get(name, 0) <= MAX_FUNCTION_LINES)
    assert not fitting, f"now within the limit, remove from KNOWN_LONG_FUNCTIONS: {fitting}"


def test_the_measure_sees_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(45))
    path = tmp_path / "long.py"
    path.write_text(f"class A:\n  def f(self):\n{body}\n")
    assert _function_lengths(path)["A.f"] == 46
