"""Python scalar functions in SQL, registered the three ways Flink's documentation shows.

``CREATE TEMPORARY FUNCTION ... AS 'module.name' LANGUAGE PYTHON`` for a ``udf`` in a module
the program writes to a temporary directory and ships with ``add_python_file`` (the module
imports the library the program's own imports name);
``create_temporary_function`` and ``create_temporary_system_function`` for ``udf`` objects (a
decorated function, a ``ScalarFunction`` subclass with ``open`` and constructor state, a lambda
with an input type); ``DROP TEMPORARY FUNCTION``; UDFs in SELECT, WHERE and GROUP BY, on NULL
input, and called from the Table API with ``call``. Parallelism 1; results via
``execute().print()``.
"""

import os
import sys
import tempfile

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import call, col
from pyflink.table.udf import ScalarFunction, udf

# the module imports the same library as this program (found from an imported name)
PACKAGE = udf.__module__.split(".")[0]
MODULE = f'''
from {PACKAGE}.table import DataTypes
from {PACKAGE}.table.udf import udf


@udf(result_type=DataTypes.STRING())
def shout(text):
    return None if text is None else text.upper() + "!"
'''


class Scale(ScalarFunction):
    def __init__(self, factor):
        self.factor = factor
        self.offset = None

    def open(self, function_context):
        self.offset = 1

    def eval(self, value):
        return value * self.factor + self.offset


@udf(result_type=DataTypes.STRING())
def bucket(n):
    return "small" if n < 10 else "large"


def main():
    directory = tempfile.mkdtemp(prefix="table-udfs-")
    with open(os.path.join(directory, "parity_table_udfs.py"), "w", encoding="utf-8") as out:
        out.write(MODULE)
    sys.path.insert(0, directory)

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.add_python_file(os.path.join(directory, "parity_table_udfs.py"))
    t_env.create_temporary_view("items", t_env.from_elements(
        [(1, "apple", 3), (2, None, 12), (3, "kiwi", 7), (4, "plum", 25)],
        DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()),
                       DataTypes.FIELD("name", DataTypes.STRING()),
                       DataTypes.FIELD("qty", DataTypes.INT())])))

    t_env.execute_sql(
        "CREATE TEMPORARY FUNCTION shout AS 'parity_table_udfs.shout' LANGUAGE PYTHON").print()
    t_env.create_temporary_function(
        "scale", udf(Scale(10), result_type=DataTypes.BIGINT()))
    t_env.create_temporary_system_function("bucket", bucket)
    t_env.create_temporary_function(
        "twice", udf(lambda s: None if s is None else s + s, input_types=[DataTypes.STRING()],
                     result_type=DataTypes.STRING()))

    t_env.execute_sql(
        "SELECT id, shout(name) AS loud, scale(qty) AS scaled, bucket(qty) AS size, "
        "twice(name) AS doubled FROM items").print()
    t_env.execute_sql(
        "SELECT bucket(qty) AS size, COUNT(*) AS cnt FROM items "
        "WHERE shout(name) IS NOT NULL GROUP BY bucket(qty)").print()
    t_env.from_path("items") \
        .select(col("id"), call("shout", col("name")), call("scale", col("qty") + 1)) \
        .execute().print()

    t_env.execute_sql("DROP TEMPORARY FUNCTION twice").print()
    print(sorted(t_env.list_user_defined_functions()))


if __name__ == "__main__":
    main()
