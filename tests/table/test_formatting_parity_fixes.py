"""Formatting fixes found by the Table/SQL parity programs (tests/parity/programs/table_*.py).

Each case is a line PyFlink 2.3.0 printed in a parity program's expected output
(tests/parity/expected/), checked here against the pure formatting function that prints it.
"""

from __future__ import annotations

from flintlock.table.formatting.tableau import render_raw


def test_the_result_of_a_statement_set_with_two_sinks_joins_its_counts_with_a_comma_and_space():
    # table_statement_set: a statement set of two INSERTs prints "-1, -1" (one -1 per sink)
    assert render_raw([[-1, -1]]) == "-1, -1\n"


def test_the_result_of_a_single_insert_is_its_count_alone():
    # table_statement_set: a single INSERT prints "-1"
    assert render_raw([[-1]]) == "-1\n"
