"""PyFlink's import surface, checked name by name (issue 27).

``manifest.json`` (written by ``generate_manifest.py`` from a real PyFlink installation) lists
every public name of every public PyFlink module with its kind. For each (module, name):

- ``from flintlock.<same path> import <name>`` gives an object of the same kind (class,
  function, constant, module), or
- the pair is unsupported, as data in ``flintlock/_missing_modules.py`` — the module is in
  ``MISSING`` and importing it raises ``MissingPyFlinkModuleError`` naming PyFlink's module, or
  the name is in ``MISSING_NAMES`` and importing it raises ``MissingPyFlinkNameError`` naming
  it.

The tables themselves are checked too: no entry for something PyFlink does not have, none for
something flintlock has. ``pyflink.table*`` is checked like the rest since issue 28 gave
flintlock its Table API (``ENFORCE_TABLE_SURFACE``).
docs/api.md states how many names import; ``test_docs_state_the_count`` keeps it true.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from flintlock._missing_modules import (
    MISSING,
    MISSING_NAMES,
    MissingPyFlinkModuleError,
    MissingPyFlinkNameError,
    pyflink_name,
)
from tests.surface.kinds import kind_of

ENFORCE_TABLE_SURFACE = True
"""Whether ``pyflink.table*`` is checked (on since flintlock/table/ exists, issue 28)."""

SURFACE_DIR = Path(__file__).resolve().parent
MANIFEST = json.loads((SURFACE_DIR / "manifest.json").read_text(encoding="utf-8"))
API_DOC = SURFACE_DIR.parents[1] / "docs" / "api.md"


def _enforced(module: str) -> bool:
    is_table = module == "pyflink.table" or module.startswith("pyflink.table.")
    return ENFORCE_TABLE_SURFACE or not is_table


ENFORCED = {module: names for module, names in MANIFEST["modules"].items()
            if _enforced(module)}


def flintlock_name(pyflink: str) -> str:
    return "flintlock" + pyflink[len("pyflink"):]


def _missing_module(module: str) -> str | None:
    return next((name for name in MISSING
                 if module == name or module.startswith(name + ".")), None)


def import_name(module: str, name: str) -> object:
    """What ``from module import name`` gives (raising what it raises)."""
    namespace: dict[str, object] = {}
    exec(f"from {module} import {name} as value", namespace)
    return namespace["value"]


def problems_of(pyflink_module: str) -> list[str]:
    """Every (module, name) of ``pyflink_module`` that breaks the rule, described."""
    module = flintlock_name(pyflink_module)
    names = ENFORCED[pyflink_module]
    if _missing_module(module) is not None:
        with pytest.raises(MissingPyFlinkModuleError, match=re.escape(pyflink_module)):
            importlib.import_module(module)
        return []
    importlib.import_module(module)
    problems = []
    for name, kind in sorted(names.items()):
        listed = name in MISSING_NAMES.get(module, {})
        try:
            value = import_name(module, name)
        except MissingPyFlinkNameError as error:
            if not listed or error.missing_name != name or name not in str(error):
                problems.append(f"{module}.{name}: unexpected {error!r}")
            continue
        except MissingPyFlinkModuleError as error:
            if kind != "module" or _missing_module(f"{module}.{name}") is None:
                problems.append(f"{module}.{name}: unexpected {error!r}")
            continue
        except ImportError as error:
            problems.append(f"{module}.{name} ({kind}): not importable and not listed as "
                            f"unsupported ({error})")
            continue
        if listed:
            problems.append(f"{module}.{name}: listed in MISSING_NAMES but importable")
        elif kind_of(value) != kind:
            problems.append(f"{module}.{name}: a {kind_of(value)} in flintlock, a {kind} in "
                            "PyFlink")
    return problems


@pytest.mark.parametrize("pyflink_module", sorted(ENFORCED))
def test_every_name_imports_with_its_kind_or_is_listed_as_unsupported(pyflink_module):
    assert problems_of(pyflink_module) == []


def test_the_unsupported_tables_name_only_what_pyflink_has():
    modules = MANIFEST["modules"]
    for module in MISSING:
        assert pyflink_name(module) in modules, f"MISSING lists {module}, not in PyFlink"
    for module, names in MISSING_NAMES.items():
        assert pyflink_name(module) in modules, f"MISSING_NAMES lists {module}"
        assert _missing_module(module) is None, f"{module} is missing as a whole already"
        for name in names:
            assert name in modules[pyflink_name(module)], f"{module}.{name} is not in PyFlink"


def test_a_missing_name_is_an_import_error_that_names_it():
    with pytest.raises(MissingPyFlinkNameError) as raised:
        import_name("flintlock.datastream.connectors.kafka", "FlinkKafkaConsumer")
    error = raised.value
    assert isinstance(error, ImportError) and not isinstance(error, AttributeError)
    assert error.name == "flintlock.datastream.connectors.kafka"
    assert error.missing_name == "FlinkKafkaConsumer"
    assert "pyflink.datastream.connectors.kafka.FlinkKafkaConsumer" in str(error)
    assert "docs/api.md" in str(error)


def test_other_unknown_names_stay_attribute_errors():
    state = importlib.import_module("flintlock.datastream.state")
    assert not hasattr(state, "NoSuchThing")
    connectors = importlib.import_module("flintlock.datastream.connectors")
    assert kind_of(connectors.FileSource) == "class"  # the module's own __getattr__ still runs
    assert not hasattr(connectors, "NoSuchConnector")


def importable_count() -> tuple[int, int]:
    """(names importable from flintlock with PyFlink's kind, names checked)."""
    total = sum(len(names) for names in ENFORCED.values())
    failing = 0
    for pyflink_module, names in ENFORCED.items():
        module = flintlock_name(pyflink_module)
        if _missing_module(module) is not None:
            failing += len(names)
            continue
        for name in names:
            try:
                import_name(module, name)
            except ImportError:
                failing += 1
    return total - failing, total


def test_docs_state_the_count():
    importable, total = importable_count()
    stated = re.search(r"(\d+) of the (\d+) public names", API_DOC.read_text(encoding="utf-8"))
    assert stated is not None, "docs/api.md does not state the count"
    assert (int(stated.group(1)), int(stated.group(2))) == (importable, total)
