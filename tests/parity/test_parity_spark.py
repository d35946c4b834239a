"""PyFlink parity on embedded Spark: twenty of the parity programs, ported by changing their
imports only, run with TaskManagers as Spark barrier-stage tasks and print what PyFlink printed.

``word_count`` reads its file with a ``FileSource`` and prints through the print sink, whose
lines the TaskManagers forward to the driver's stdout; ``state_access`` keeps keyed state at
parallelism 2 and collects its results with ``execute_and_collect``; ``recovery`` fails once
midway and restarts from a checkpoint, and its exactly-once results match PyFlink's;
``event_time``, ``end_of_input_timers``, ``count_windows`` and ``broadcast_state`` carry
timestamps, watermarks, windows and broadcast state between TaskManager processes;
``python_files`` imports a module given to ``add_python_file`` inside its functions, shipped
through Spark; ``async_io`` runs asyncio event loops in the TaskManagers (ordered, unordered,
timeout, retry); ``custom_window_assigner`` and ``continuous_trigger`` ship a user's window
assigner and a continuous trigger to them; ``cached_stream`` stores a cached stream from
TaskManager processes and reads it back in later jobs.

Table API and SQL programs (issue 28) on Spark: ``table_word_count`` (a Python udtf and an
updating GROUP BY into a ``print`` table, whose lines come from the TaskManagers),
``table_group_by_updates`` (``execute().print()`` of changelogs collected from them),
``table_statement_set`` (two sinks of one job), ``table_mixing_datastream`` (datagen, a
Table → DataStream → Table round trip), ``table_process_json_data_with_udf`` (a Python
scalar UDF shipped to the TaskManagers), ``table_python_udf_sql`` (a UDF module given to
``add_python_file`` and named in ``CREATE TEMPORARY FUNCTION``) and ``table_filesystem``
(filesystem tables written by TaskManager processes and read back); issue 32's
``table_group_windows`` (rowtime watermarks and window aggregation state in TaskManager
processes, a print table and collected results).
"""

from __future__ import annotations

import tempfile

import pytest

from tests.parity.harness import PROGRAMS, Expected, run_ported

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.mark.parametrize("name", ["word_count", "state_access", "recovery", "event_time",
                                  "end_of_input_timers", "count_windows", "broadcast_state",
                                  "python_files", "async_io", "custom_window_assigner",
                                  "continuous_trigger", "cached_stream",
                                  "table_word_count", "table_group_by_updates",
                                  "table_statement_set", "table_mixing_datastream",
                                  "table_process_json_data_with_udf", "table_python_udf_sql",
                                  "table_filesystem", "table_group_windows"])
def test_program_on_spark_prints_what_pyflink_printed(name, capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    expected = Expected(name, ordered=PROGRAMS[name])
    run_ported(name)
    assert expected.normalize(capsys.readouterr().out) == expected.lines()
