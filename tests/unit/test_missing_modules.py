"""Importing a PyFlink module flintlock lacks says so (issue 18)."""

from __future__ import annotations

import importlib

import pytest

from flintlock._missing_modules import MISSING, MissingPyFlinkModuleError


@pytest.mark.parametrize("name", sorted(MISSING))
def test_a_missing_pyflink_module_raises_a_clear_import_error(name: str) -> None:
    with pytest.raises(MissingPyFlinkModuleError, match=r"docs/api\.md") as caught:
        importlib.import_module(name)
    assert isinstance(caught.value, ModuleNotFoundError)  # `except ImportError` still works
    assert "pyflink" + name[len("flintlock"):] in str(caught.value)


def test_a_from_import_of_a_missing_connector_names_it() -> None:
    with pytest.raises(ImportError, match="Elasticsearch"):
        exec("from flintlock.datastream.connectors.elasticsearch import Elasticsearch7SinkBuilder")


def test_other_missing_names_stay_ordinary_errors() -> None:
    with pytest.raises(ModuleNotFoundError) as caught:
        importlib.import_module("flintlock.datastream.connectors.no_such_connector")
    assert not isinstance(caught.value, MissingPyFlinkModuleError)
    assert importlib.import_module("flintlock.datastream.connectors.kafka")  # real ones import
