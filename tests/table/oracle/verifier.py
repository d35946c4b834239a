"""Oracle: PyFlink's from_elements value checks (``_create_type_verifier``, pure Python, no JVM).

Prints each case after a ``=== CASE name`` marker; the output is tests/table/fixtures/verifier.txt.
"""

import datetime
import decimal
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import case, end
from pyflink.table import DataTypes, Row
from pyflink.table.types import _create_type_verifier

ROW = DataTypes.ROW([DataTypes.FIELD("a", DataTypes.TINYINT()),
                     DataTypes.FIELD("b", DataTypes.STRING(False))])
CASES = {
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
for name, (data_type, value) in CASES.items():
    case(name)
    try:
        _create_type_verifier(data_type)(value)
        print("OK")
    except Exception as error:
        print(type(error).__name__, str(error))
end()
