"""from_elements' value checks against PyFlink 2.3.0's own ``_create_type_verifier``
(tests/table/fixtures/verifier.txt, from tests/table/oracle/verifier.py): same outcome,
same exception class, same message."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pytest

from flintlock.common.types import Row
from flintlock.table.types import DataType, DataTypes, _create_type_verifier
from tests.table.oracle.cases import load_cases

ORACLE = load_cases("verifier.txt")
ROW = DataTypes.ROW([DataTypes.FIELD("a", DataTypes.TINYINT()),
                     DataTypes.FIELD("b", DataTypes.STRING(False))])
CASES: dict[str, tuple[DataType, Any]] = {
    "row ok": (ROW, (1, "x")),
    "row named ok": (ROW, Row(a=1, b="x")),
    "tinyint range": (ROW, (300, "x")),
    "not null": (ROW, (1, None)),
    "wrong class": (ROW, ("x", "y")),
    "row length": (ROW, (1, "a", 2)),
    "row class": (ROW, 5),
    "varchar length": (DataTypes.VARCHAR(2), "abc"),
    "char length": (DataTypes.CHAR(2), "abc"),
    "int range": (DataTypes.INT(), 2 ** 31),
    "smallint range": (DataTypes.SMALLINT(), -40000),
    "bigint class": (DataTypes.BIGINT(), 1.5),
    "double class": (DataTypes.DOUBLE(), 1),
    "decimal class": (DataTypes.DECIMAL(10, 2), 1.5),
    "date ok datetime": (DataTypes.DATE(), datetime.datetime(2023, 1, 1)),
    "time class": (DataTypes.TIME(), datetime.datetime(2023, 1, 1)),
    "array element": (DataTypes.ARRAY(DataTypes.INT()), [1, "x"]),
    "array class": (DataTypes.ARRAY(DataTypes.INT()), {1}),
    "map key null": (DataTypes.MAP(DataTypes.STRING(False), DataTypes.INT()), {None: 1}),
    "map value": (DataTypes.MAP(DataTypes.STRING(), DataTypes.INT()), {"a": "b"}),
    "nested row": (DataTypes.ROW([DataTypes.FIELD("r", ROW)]), ((1, None),)),
    "bool class": (DataTypes.BOOLEAN(), 1),
    "decimal ok": (DataTypes.DECIMAL(10, 2), decimal.Decimal("1.5")),
    "binary exact": (DataTypes.BINARY(2), bytearray(b"abc")),
}


def test_every_oracle_case_is_covered() -> None:
    assert set(ORACLE) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_verifier_answers_as_pyflink(name: str) -> None:
    data_type, value = CASES[name]
    expected = ORACLE[name].rstrip("\n")
    try:
        _create_type_verifier(data_type)(value)
    except (TypeError, ValueError) as error:
        assert f"{type(error).__name__} {error}" == expected
    else:
        assert expected == "OK"
