# ruff: noqa: E501 - the oracle programs hold long SQL text
"""Oracle: TableResult.print() with table.display.max-column-width set (streaming and batch).

Prints each case after a ``=== CASE name`` marker; the output is
tests/table/fixtures/tableau_config.txt.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import case, end
from pyflink.table import EnvironmentSettings, TableEnvironment

QUERY = """SELECT * FROM (VALUES
    (CAST(1234567890123 AS BIGINT), 'a string longer than ten', CAST(TIMESTAMP '2023-01-01 10:00:00' AS TIMESTAMP(3)), CAST(1.5 AS DECIMAL(20, 2)), 'short'),
    (CAST(NULL AS BIGINT), '中文中文中文中文', CAST(NULL AS TIMESTAMP(3)), CAST(NULL AS DECIMAL(20, 2)), 'x')
    ) AS T(a_long_column_name, s, ts, d, t)"""
for mode in ("streaming", "batch"):
    settings = (EnvironmentSettings.in_streaming_mode() if mode == "streaming"
                else EnvironmentSettings.in_batch_mode())
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "1")
    for width in ("10", "4"):
        t_env.get_config().set("table.display.max-column-width", width)
        case(f"{mode} width {width}")
        t_env.execute_sql(QUERY).print()
end()
