"""Date and time functions over literals and columns, with the session time zone set.

``table.local-time-zone`` is ``UTC``. DATE / TIME / TIMESTAMP literals, ``EXTRACT``,
``YEAR``/``MONTH``/``DAYOFMONTH``/``HOUR``, ``DATE_FORMAT``, ``TO_DATE``, ``TO_TIMESTAMP``,
``TIMESTAMPADD``, ``TIMESTAMPDIFF``, date and timestamp ``+ INTERVAL``, ``FLOOR``/``CEIL``
of a timestamp to a unit, ``UNIX_TIMESTAMP`` of a string and ``FROM_UNIXTIME``, comparisons of
dates, printed with ``execute().print()``. Nothing depends on the current time. Parallelism 1.
"""

from pyflink.table import EnvironmentSettings, TableEnvironment


def main():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    t_env.get_config().set("table.local-time-zone", "UTC")
    t_env.create_temporary_view("days", t_env.from_elements(
        [(1, "2024-01-31 23:59:58"), (2, "2024-02-29 08:00:00"), (3, "1999-12-31 12:30:45")],
        ["id", "ts_text"]))

    t_env.execute_sql("""
        SELECT id,
               TO_TIMESTAMP(ts_text) AS ts,
               TO_DATE(SUBSTRING(ts_text FROM 1 FOR 10)) AS d,
               EXTRACT(YEAR FROM TO_TIMESTAMP(ts_text)) AS y,
               MONTH(TO_TIMESTAMP(ts_text)) AS mon,
               DAYOFMONTH(TO_TIMESTAMP(ts_text)) AS dom,
               HOUR(TO_TIMESTAMP(ts_text)) AS h,
               DATE_FORMAT(TO_TIMESTAMP(ts_text), 'yyyy/MM/dd HH:mm') AS formatted,
               TIMESTAMPADD(DAY, 1, TO_TIMESTAMP(ts_text)) AS next_day,
               TO_TIMESTAMP(ts_text) + INTERVAL '2' SECOND AS plus_two,
               TIMESTAMPDIFF(HOUR, TO_TIMESTAMP('2024-01-01 00:00:00'),
                             TO_TIMESTAMP(ts_text)) AS hours_since
        FROM days""").print()

    t_env.execute_sql("""
        SELECT DATE '2024-02-28' + INTERVAL '1' DAY AS leap,
               FLOOR(TIMESTAMP '2024-05-17 10:42:13' TO HOUR) AS floored,
               CEIL(TIMESTAMP '2024-05-17 10:42:13' TO DAY) AS ceiled,
               UNIX_TIMESTAMP('2024-01-01 00:00:00') AS epoch,
               FROM_UNIXTIME(86400) AS one_day,
               DATE '2024-01-01' < DATE '2024-01-02' AS earlier,
               EXTRACT(DOW FROM DATE '2024-05-17') AS dow,
               TIME '10:20:30' AS t""").print()


if __name__ == "__main__":
    main()
