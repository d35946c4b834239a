"""Mini-batch aggregation (``table.exec.mini-batch.*``) in one and two phases (local-global,
``table.optimizer.agg-phase-strategy``), as Flink's documentation describes them, printed with
``execute().print()``. One source, parallelism 1. A mini-batch emits each key once, in the
order Flink's buffer (a Java HashMap of the keys as BinaryRowData) walks them: the last part
groups by keys of many types in one mini-batch to show that order. ``allow-latency`` is an hour,
so only the size and the end of the input end a mini-batch (a latency timer would fire at a
moment that depends on the machine)."""

import datetime

from pyflink.table import EnvironmentSettings, TableEnvironment

CLICKS = [
    (1, "ann", "home"), (2, "bob", "home"), (3, "ann", "cart"), (4, "cid", "home"),
    (5, "bob", "cart"), (6, "ann", "home"), (7, "cid", "pay"), (8, "bob", "home"),
    (9, "ann", "pay"),
]


def environment(settings):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = t_env.get_config()
    config.set("parallelism.default", "1")
    for key, value in settings.items():
        config.set(key, value)
    t_env.create_temporary_view("clicks", t_env.from_elements(CLICKS, ["id", "who", "page"]))
    return t_env


MINI_BATCH = {"table.exec.mini-batch.enabled": "true",
              "table.exec.mini-batch.allow-latency": "1 h",
              "table.exec.mini-batch.size": "1000"}


def main():
    for title, settings in [
            ("mini-batch, default phases", MINI_BATCH),
            ("mini-batch, one phase", {**MINI_BATCH,
                                       "table.optimizer.agg-phase-strategy": "ONE_PHASE"}),
            ("mini-batch of 2 rows, two phases", {**MINI_BATCH, "table.exec.mini-batch.size": "2",
                                       "table.optimizer.agg-phase-strategy": "TWO_PHASE"}),
            ("mini-batch of 2 rows, one phase", {**MINI_BATCH, "table.exec.mini-batch.size": "2",
                                       "table.optimizer.agg-phase-strategy": "ONE_PHASE"}),
    ]:
        print(title)
        t_env = environment(settings)
        t_env.execute_sql(
            "SELECT who, COUNT(*) AS n, MAX(id) AS last_id FROM clicks GROUP BY who").print()
        t_env.execute_sql(
            "SELECT n, COUNT(*) AS people FROM "
            "(SELECT who, COUNT(*) AS n FROM clicks GROUP BY who) GROUP BY n").print()

    print("keys of many types in one mini-batch: the order Flink's buffer walks them")
    t_env = environment(MINI_BATCH)
    words = ["a", "bb", "ccc", "dddddd", "seven77", "eight888", "a much longer key value",
             "Größe", "日本語", "", "x" * 40, "k1", "k2", "k3", "k10", "k11", "k12", "k13",
             "k14", "k15", "k16", "k17", "k18", "k19", "k20"]
    t_env.create_temporary_view("words", t_env.from_elements(
        [(w, i, datetime.date(2024, 1, 1) + datetime.timedelta(days=i * 11),
          datetime.datetime(2024, 1, 1, 8) + datetime.timedelta(seconds=i * 3601, milliseconds=i))
         for i, w in enumerate(words)], ["w", "i", "d", "ts"]))
    t_env.execute_sql("SELECT w, COUNT(*) AS n FROM words GROUP BY w").print()
    t_env.execute_sql(
        "SELECT i - 12 AS k, COUNT(*) AS n FROM words GROUP BY i - 12").print()
    t_env.execute_sql(
        "SELECT CAST(i * 7 AS INT) AS k, SUM(i) AS s FROM words GROUP BY CAST(i * 7 AS INT)"
    ).print()
    t_env.execute_sql(
        "SELECT MOD(i, 3) = 0 AS k, COUNT(*) AS n FROM words GROUP BY MOD(i, 3) = 0").print()
    t_env.execute_sql(
        "SELECT CAST(i AS DOUBLE) / 4 AS k, COUNT(*) AS n FROM words "
        "GROUP BY CAST(i AS DOUBLE) / 4").print()
    t_env.execute_sql(
        "SELECT CASE WHEN MOD(i, 4) = 0 THEN CAST(NULL AS STRING) ELSE SUBSTRING(w, 1, 2) END "
        "AS p, MOD(i, 3) AS m, COUNT(*) AS n FROM words GROUP BY "
        "CASE WHEN MOD(i, 4) = 0 THEN CAST(NULL AS STRING) ELSE SUBSTRING(w, 1, 2) END, "
        "MOD(i, 3)").print()
    t_env.execute_sql("SELECT d, COUNT(*) AS n FROM words GROUP BY d").print()
    t_env.execute_sql("SELECT ts, COUNT(*) AS n FROM words GROUP BY ts").print()
    t_env.execute_sql(
        "SELECT CAST(ts AS TIMESTAMP(3)) AS t3, COUNT(*) AS n FROM words "
        "GROUP BY CAST(ts AS TIMESTAMP(3))").print()
    t_env.execute_sql(
        "SELECT CAST(i AS DECIMAL(10, 2)) / 8 AS k, COUNT(*) AS n FROM words "
        "GROUP BY CAST(i AS DECIMAL(10, 2)) / 8").print()


if __name__ == "__main__":
    main()
