"""``flintlock.table.catalog``: PyFlink's ObjectPath and ObjectIdentifier with Flink's text
and checks, and the resolved-schema classes under PyFlink's path (issue 27)."""

import pytest

from flintlock.table import catalog, resolved_schema
from flintlock.table.catalog import ObjectIdentifier, ObjectPath
from flintlock.table.errors import ValidationError


def test_object_path_names_and_text():
    path = ObjectPath("db", "orders")
    assert (path.get_database_name(), path.get_object_name()) == ("db", "orders")
    assert path.get_full_name() == str(path) == "db.orders"
    assert path == ObjectPath.from_string("db.orders") and hash(path) == hash(
        ObjectPath("db", "orders"))


def test_object_paths_order_by_full_name():
    a, b = ObjectPath("db", "a"), ObjectPath("db", "b")
    assert a < b and b > a and a <= a and a.compare_to(b) < 0 and b.compare_to(a) > 0
    assert a.compare_to(ObjectPath("db", "a")) == 0
    assert sorted([b, a]) == [a, b]


@pytest.mark.parametrize("text, message", [
    ("orders", "Cannot get split 'orders'"),
    ("a.b.c", "Cannot get split 'a.b.c'"),
    ("db.", "Cannot get split 'db.'"),
    (".t", "databaseName cannot be null or empty"),
    ("  ", "fullName cannot be null or empty"),
])
def test_object_path_from_string_refuses_other_shapes(text, message):
    with pytest.raises(ValidationError, match=message):
        ObjectPath.from_string(text)


def test_object_path_needs_names():
    with pytest.raises(ValidationError, match="objectName cannot be null or empty"):
        ObjectPath("db", "")


def test_object_identifier_text_and_parts():
    identifier = ObjectIdentifier.of("default_catalog", "my`db", "t")
    assert identifier.to_list() == ["default_catalog", "my`db", "t"]
    assert identifier.as_summary_string() == "default_catalog.my`db.t"
    assert identifier.as_serializable_string() == str(identifier) == (
        "`default_catalog`.`my``db`.`t`")
    assert identifier.to_object_path() == ObjectPath("my`db", "t")
    assert identifier.get_catalog_name() == "default_catalog"
    assert identifier == ObjectIdentifier.of("default_catalog", "my`db", "t")
    with pytest.raises(ValidationError, match="Object name must not be null"):
        ObjectIdentifier.of("c", "d", None)


def test_the_resolved_schema_classes_are_re_exported_not_copied():
    for name in ("Column", "PhysicalColumn", "ComputedColumn", "MetadataColumn",
                 "WatermarkSpec", "UniqueConstraint", "ResolvedSchema"):
        assert getattr(catalog, name) is getattr(resolved_schema, name)
