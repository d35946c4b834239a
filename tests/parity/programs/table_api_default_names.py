"""The column names the Table API gives expressions that have no alias.

``select`` of a column, of arithmetic, of a function call, of a literal and of a Python UDF
call; ``add_columns`` of an unnamed expression; ``group_by(...).select`` of aggregates; a
``select`` with some columns aliased and some not; ``print_schema`` of each and a query's
printed header. One source, parallelism 1.
"""

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import call, col, lit
from pyflink.table.udf import udf


@udf(result_type=DataTypes.STRING())
def tag(name):
    return "<" + name + ">"


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_function("tag", tag)
    items = t_env.from_elements([(1, "ant", 3), (2, "bee", 5)], ["id", "name", "qty"])

    projected = items.select(col("id"), col("qty") * 2, col("name").upper_case, lit(7),
                             tag(col("name")), call("tag", col("name")))
    projected.print_schema()
    projected.execute().print()

    items.select(col("id").alias("key"), col("qty") + 1, col("name")).print_schema()
    items.add_columns(col("qty") * 10).print_schema()
    items.group_by(col("name")) \
        .select(col("name"), col("qty").sum, col("id").count, col("qty").max + 1) \
        .print_schema()


if __name__ == "__main__":
    main()
