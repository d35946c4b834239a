"""Split distinct aggregation (``table.optimizer.distinct-agg.split.enabled``), printed with
``execute().print()``: each DISTINCT aggregate runs as a partial aggregation grouped by the key
and ``MOD(HASH_CODE(x), bucket-num)``, then a final one per key, so the changelog has more
-U/+U pairs (and a -D/+I pair where a key's only partial row is updated) than without the
split. One source, parallelism 1, no mini-batch: the changelog is then deterministic. A
bucket-num of 4 puts several values in one bucket (which rows collide follows Flink's
HASH_CODE). With mini-batch, only the final table is printed (the order of updates across
mini-batches is not the point here)."""

from pyflink.table import EnvironmentSettings, TableEnvironment

CLICKS = [
    (1, "ann", "home", 3), (2, "bob", "home", 1), (3, "ann", "cart", 5), (4, "cid", "home", 2),
    (5, "bob", "cart", 1), (6, "ann", "home", 4), (7, "cid", "pay", 2), (8, "bob", "home", 7),
    (9, "ann", "pay", 3), (10, "ann", "search", 6), (11, "bob", "pay", None),
]


def environment(settings):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = t_env.get_config()
    config.set("parallelism.default", "1")
    for key, value in settings.items():
        config.set(key, value)
    t_env.create_temporary_view(
        "clicks", t_env.from_elements(CLICKS, ["id", "who", "page", "qty"]))
    return t_env


SPLIT = {"table.optimizer.distinct-agg.split.enabled": "true"}

QUERIES = [
    "SELECT who, COUNT(DISTINCT page) AS pages FROM clicks GROUP BY who",
    "SELECT who, COUNT(DISTINCT page) AS pages, COUNT(*) AS n, SUM(qty) AS total "
    "FROM clicks GROUP BY who",
    "SELECT who, COUNT(DISTINCT page) AS pages, SUM(DISTINCT qty) AS qtys, MAX(id) AS last_id, "
    "AVG(qty) AS mean FROM clicks GROUP BY who",
    "SELECT COUNT(DISTINCT who) AS people, COUNT(DISTINCT page) "
    "FILTER (WHERE id > 4) AS late_pages FROM clicks",
]


def final_rows(t_env, query):
    rows = []
    with t_env.execute_sql(query).collect() as results:
        for row in results:
            kind = str(row.get_row_kind())
            values = tuple(row)
            if kind in ("+I", "+U", "INSERT", "UPDATE_AFTER"):
                rows.append(values)
            else:
                rows.remove(values)
    return sorted(rows, key=repr)


def main():
    for title, settings, queries in [
            ("without the split", {}, QUERIES[:1]),
            ("split, 1024 buckets", SPLIT, QUERIES),
            ("split, 4 buckets", {**SPLIT, "table.optimizer.distinct-agg.split.bucket-num": "4"},
             [QUERIES[0], QUERIES[3]]),
    ]:
        print(title)
        t_env = environment(settings)
        for query in queries:
            t_env.execute_sql(query).print()

    print("split with mini-batch: final tables")
    t_env = environment({**SPLIT, "table.exec.mini-batch.enabled": "true",
                         "table.exec.mini-batch.allow-latency": "1 h",
                         "table.exec.mini-batch.size": "3"})
    for query in QUERIES[2:]:
        for row in final_rows(t_env, query):
            print(row)


if __name__ == "__main__":
    main()
