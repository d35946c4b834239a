"""Statement sets: several INSERTs run as one job.

``EXECUTE STATEMENT SET BEGIN INSERT ...; INSERT ...; END;`` in ``execute_sql``, and
``create_statement_set()`` with ``add_insert_sql`` and ``add_insert`` (a Table into a
``TableDescriptor``-declared table); what the TableResult of an INSERT and of a statement set
prints (one ``-1`` column per sink, named after the sink); sinks are ``print`` tables with
identifiers, at parallelism 1. Several sinks of one job print in no defined order between them,
so the output is compared as sorted lines.
"""

from pyflink.table import (
    DataTypes,
    EnvironmentSettings,
    Schema,
    TableDescriptor,
    TableEnvironment,
)
from pyflink.table.expressions import col, lit


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_view("readings", t_env.from_elements(
        [("s1", 21.5), ("s2", 19.0), ("s1", 22.5), ("s3", 30.25), ("s2", 18.5)],
        ["sensor", "temp"]))
    t_env.execute_sql(
        "CREATE TABLE warm (sensor STRING, temp DOUBLE) "
        "WITH ('connector' = 'print', 'print-identifier' = 'warm')")
    t_env.execute_sql(
        "CREATE TABLE per_sensor (sensor STRING, readings BIGINT, top DOUBLE) "
        "WITH ('connector' = 'print', 'print-identifier' = 'per_sensor')")

    result = t_env.execute_sql("""
        EXECUTE STATEMENT SET
        BEGIN
            INSERT INTO warm SELECT sensor, temp FROM readings WHERE temp > 20;
            INSERT INTO per_sensor
                SELECT sensor, COUNT(*), MAX(temp) FROM readings GROUP BY sensor;
        END;""")
    result.wait()
    result.print()

    t_env.create_temporary_table(
        "labels",
        TableDescriptor.for_connector("print")
        .schema(Schema.new_builder()
                .column("sensor", DataTypes.STRING())
                .column("label", DataTypes.STRING())
                .build())
        .option("print-identifier", "labels")
        .build())
    statement_set = t_env.create_statement_set()
    statement_set.add_insert_sql("INSERT INTO warm SELECT sensor, temp + 100 FROM readings")
    statement_set.add_insert(
        "labels",
        t_env.from_path("readings").select(col("sensor"), lit("reading").alias("label")))
    result = statement_set.execute()
    result.wait()
    result.print()

    single = t_env.execute_sql("INSERT INTO labels VALUES ('s9', 'single')")
    single.wait()
    single.print()


if __name__ == "__main__":
    main()
