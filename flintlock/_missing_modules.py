"""Modules PyFlink has and flintlock does not (yet): importing one raises a
``MissingPyFlinkModuleError`` that says so and points to docs/api.md, instead of a bare
``No module named ...`` that reads like a broken installation.

A finder on ``sys.meta_path`` (installed when ``flintlock`` is imported) answers only for the
names in ``MISSING``; every other import is left to the import system.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

MISSING: dict[str, str] = {
    "flintlock.datastream.connectors.cassandra": "the Cassandra sink",
    "flintlock.datastream.connectors.dynamic_kafka": "the dynamic Kafka source",
    "flintlock.datastream.connectors.elasticsearch": "the Elasticsearch sinks",
    "flintlock.datastream.connectors.hybrid_source": "the hybrid source",
    "flintlock.datastream.connectors.jdbc": "the JDBC sink",
    "flintlock.datastream.connectors.kinesis": "the Kinesis connectors",
    "flintlock.datastream.connectors.pulsar": "the Pulsar connectors",
    "flintlock.datastream.connectors.rabbitmq": "the RabbitMQ connectors",
    "flintlock.datastream.formats.orc": "the ORC format",
}
"""Module name -> what PyFlink offers there."""


class MissingPyFlinkModuleError(ModuleNotFoundError):
    """A PyFlink module that flintlock does not have."""


class _MissingModuleFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        top = next((name for name in MISSING
                    if fullname == name or fullname.startswith(name + ".")), None)
        if top is None:
            return None
        pyflink = "pyflink" + top[len("flintlock"):]
        raise MissingPyFlinkModuleError(
            f"{fullname}: flintlock does not have {MISSING[top]} yet (PyFlink's {pyflink}); "
            "docs/api.md lists what flintlock supports and what it does not",
            name=fullname)


def install() -> None:
    """Adds the finder once (idempotent)."""
    if not any(isinstance(finder, _MissingModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MissingModuleFinder())
