"""The Nexmark queries on Spark Structured Streaming: CSV file streams over the generated
files, the query in Spark SQL, one ``availableNow`` trigger (every file in one micro-batch).

    python spark_program.py SPEC.json RESULT.json

SPEC and RESULT as ``flink_program.py``'s, each run with ``spark_sql`` and ``spark_mode``
(``append`` or ``complete``). ``check`` writes to the memory sink and reads its final table;
``time`` writes to the ``noop`` sink and times from ``start()`` to the end of the query (a
query still running after the run's ``time_limit`` seconds is stopped: ``{"timed_out": limit}``).
Timestamps are TIMESTAMP_NTZ (the files' UTC wall times, as Flink's TIMESTAMP(3)); local[2]
with two shuffle partitions, for parallelism 2. A table declared with Flink's
``WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL 'n' SECOND`` (the event-time queries) gets
``withWatermark("dateTime", "n seconds")``; its timestamps are then TIMESTAMP (Spark takes no
TIMESTAMP_NTZ event time), read and shown in the session time zone, UTC, which gives the same
wall times.
"""

import datetime
import decimal
import json
import re
import sys
import tempfile
import time
from collections import Counter

from pyspark.sql import SparkSession


def normalised(value):
    if isinstance(value, decimal.Decimal):
        return str(value.normalize())
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return value


WATERMARK = re.compile(r",\s*WATERMARK FOR `?(\w+)`? AS `?\w+`? - INTERVAL '(\d+)' SECOND\s*$")


def spark_columns(columns, timestamp="TIMESTAMP_NTZ"):
    return columns.replace("TIMESTAMP(3)", timestamp).replace("`", "")


def stream(spark, directory, columns):
    """The CSV file stream of a table's directory, with its watermark if it declares one."""
    watermark = WATERMARK.search(columns)
    if watermark is None:
        return (spark.readStream.schema(spark_columns(columns))
                .option("timestampNTZFormat", "yyyy-MM-dd HH:mm:ss.SSS").csv(directory))
    frame = (spark.readStream.schema(spark_columns(columns[:watermark.start()], "TIMESTAMP"))
             .option("timestampFormat", "yyyy-MM-dd HH:mm:ss.SSS").csv(directory))
    return frame.withWatermark(watermark.group(1), f"{watermark.group(2)} seconds")


def one_run(spark, run, mode, checkpoints, index):
    for table, columns in run["tables"].items():
        stream(spark, f"{run['data']}/{table}", columns).createOrReplaceTempView(table)
    result = spark.sql(run["spark_sql"])
    writer = (result.writeStream.outputMode(run["spark_mode"])
              .option("checkpointLocation", f"{checkpoints}/{index}")
              .trigger(availableNow=True))
    if mode == "check":
        query = writer.format("memory").queryName(f"out{index}").start()
        query.awaitTermination()
        rows = Counter(json.dumps([normalised(v) for v in row])
                       for row in spark.sql(f"SELECT * FROM out{index}").collect())
        return {"rows": sorted(rows.elements())}
    start = time.perf_counter()
    query = writer.format("noop").start()
    limit = run.get("time_limit")
    if limit and not query.awaitTermination(limit):
        query.stop()  # still running at the limit: stopped, reported as timed out
        return {"timed_out": limit}
    query.awaitTermination()
    return {"elapsed": time.perf_counter() - start}


def main():
    spec = json.loads(open(sys.argv[1]).read())
    spark = (SparkSession.builder.master(f"local[{spec.get('parallelism', 2)}]")
             .config("spark.sql.shuffle.partitions", str(spec.get("parallelism", 2)))
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.ui.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    results = []
    with tempfile.TemporaryDirectory(prefix="nexmark-spark-") as checkpoints:
        for index, run in enumerate(spec["runs"]):
            try:
                outcome = one_run(spark, run, spec["mode"], checkpoints, index)
            except Exception as error:  # reported per run, the next run goes on
                outcome = {"error": f"{type(error).__name__}: {str(error)[:2000]}"}
            results.append({"query": run["query"], "events": run["events"], **outcome})
            print(run["query"], run["events"],
                  {k: v for k, v in outcome.items() if k != "rows"}, flush=True)
    # Written before stop(): a JVM that died in a run (an OutOfMemoryError) makes stop() fail,
    # and the runs before it must still be reported.
    with open(sys.argv[2], "w") as out:
        json.dump(results, out)
    try:
        spark.stop()
    except Exception as error:  # the JVM is already gone: its runs are reported above
        print(f"spark.stop() failed: {type(error).__name__}", file=sys.stderr)


if __name__ == "__main__":
    main()
