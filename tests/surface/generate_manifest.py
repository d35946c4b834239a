"""Writes ``manifest.json``: every public name of every public module of a real PyFlink, with
its kind. Not a test and never imported by one: run it with the Python of a virtualenv that
has ``apache-flink`` installed (as ``tests/parity/generate_expected.py`` uses one)::

    /tmp/pyflink-venv/bin/python tests/surface/generate_manifest.py

The rule, applied to the installed ``pyflink`` package:

- **Public modules** are all modules ``pkgutil.walk_packages`` finds under ``pyflink``, except
  those in ``INTERNAL_MODULES`` (with their submodules), any module with a dotted component
  that starts with ``_`` or is ``tests``, and modules named ``utils`` (PyFlink's helpers that
  convert between Python and Java objects: ``pyflink.common.utils``,
  ``pyflink.datastream.utils``, ``pyflink.table.utils``).
- **Public names** of a module are its ``__all__`` when it has one (re-exports included: that
  is what the module promises). Without ``__all__``, they are the names the module defines
  itself at top level (``def``, ``class``, assignments; read from its source with ``ast``, so
  names it imports are not its own) that do not start with ``_``.
- Each public module is also a name of its parent package, of kind ``module``
  (``from pyflink.datastream import connectors`` works).
- **Kinds** come from the live object (``tests/surface/kinds.py``): module, class, function
  or constant.

The output is sorted JSON (module -> name -> kind) with the PyFlink version and this rule's
summary, byte-for-byte stable for one installation.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

SURFACE_DIR = Path(__file__).resolve().parent
MANIFEST = SURFACE_DIR / "manifest.json"

INTERNAL_MODULES = {
    "pyflink.examples": "example programs, not an API",
    "pyflink.find_flink_home": "locates the Flink distribution for the JVM",
    "pyflink.fn_execution": "the Python worker PyFlink's JVM operators call (Beam harness, "
                            "coders, generated protobuf modules)",
    "pyflink.gen_protos": "generates the protobuf modules",
    "pyflink.java_gateway": "the Py4J gateway to PyFlink's JVM",
    "pyflink.pyflink_callback_server": "Py4J's callback server",
    "pyflink.pyflink_gateway_server": "launches PyFlink's JVM",
    "pyflink.serializers": "pickling between the JVM and the Python workers",
    "pyflink.shell": "the interactive shell (starts a JVM when imported)",
    "pyflink.table.serializers": "the Arrow serializers of the pandas bridge",
    "pyflink.testing": "PyFlink's own test base classes and test sinks",
    "pyflink.util": "Java interop, Java exception translation, API-stability decorators",
}
"""Internal modules (with their submodules) -> why they are not part of the surface."""


def _load_kinds() -> ModuleType:
    spec = importlib.util.spec_from_file_location("surface_kinds", SURFACE_DIR / "kinds.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def is_public_module(name: str) -> bool:
    parts = name.split(".")
    if any(part.startswith("_") or part == "tests" for part in parts) or parts[-1] == "utils":
        return False
    return not any(name == internal or name.startswith(internal + ".")
                   for internal in INTERNAL_MODULES)


def public_modules(package: ModuleType) -> list[str]:
    found = [package.__name__]
    found += [info.name for info in pkgutil.walk_packages(package.__path__,
                                                          package.__name__ + ".")]
    return sorted(name for name in found if is_public_module(name))


def own_top_level_names(module: ModuleType) -> list[str]:
    """Names a module without ``__all__`` defines itself (not imports), from its source."""
    source = Path(module.__file__ or "").read_text(encoding="utf-8")
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return sorted(name for name in names if not name.startswith("_"))


def public_names(module: ModuleType, kind_of) -> dict[str, str]:
    declared = getattr(module, "__all__", None)
    names = list(declared) if declared is not None else own_top_level_names(module)
    return {name: kind_of(getattr(module, name)) for name in names}


def build_manifest() -> dict[str, object]:
    import pyflink
    import pyflink.version

    kind_of = _load_kinds().kind_of
    modules: dict[str, dict[str, str]] = {}
    for name in public_modules(pyflink):
        modules[name] = public_names(importlib.import_module(name), kind_of)
    for name in list(modules):
        parent, _, child = name.rpartition(".")
        if parent in modules:
            modules[parent][child] = "module"
    return {
        "pyflink_version": pyflink.version.__version__,
        "rule": "tests/surface/generate_manifest.py (module docstring)",
        "internal_modules": INTERNAL_MODULES,
        "modules": modules,
    }


def main() -> int:
    manifest = build_manifest()
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    count = sum(len(names) for names in manifest["modules"].values())  # type: ignore[union-attr]
    sys.stdout.write(f"{MANIFEST}: {len(manifest['modules'])} modules, "  # type: ignore[arg-type]
                     f"{count} names (PyFlink {manifest['pyflink_version']})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
