"""The parity harness: runs a PyFlink example program on flintlock, unchanged but for its imports.

A program under ``tests/parity/programs/`` is written once, against PyFlink. ``port_source``
rewrites ``pyflink`` to ``flintlock`` in its import statements and nowhere else (found with
``ast``, so a docstring or a string that mentions pyflink stays as it is), and refuses a
program that names ``pyflink`` anywhere else in its code: such a program could not be ported
by changing its imports alone. ``run_ported`` executes the ported source as ``__main__`` in
this process, as ``python program.py`` would (its functions are pickled by value, as a user
script's are), with ``sys.argv`` set to the program's path; the caller captures stdout.

``Expected`` loads what real PyFlink printed for the program (``tests/parity/expected``, written
by ``generate_expected.py``) and compares it with flintlock's output: line by line where the
program's output order is defined, as sorted lines where it is not (several print sinks, or
several sources, interleave).

``PROGRAMS`` are the programs the parity tests (threads and Spark) run, each with whether its
output order is defined; ``GAPS`` those whose output differs from PyFlink's. Owns no state
beyond the files it reads.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

PARITY_DIR = Path(__file__).resolve().parent
PROGRAMS_DIR = PARITY_DIR / "programs"
EXPECTED_DIR = PARITY_DIR / "expected"

PROGRAMS = {
    # name: whether the program's output order is defined (else compared as sorted lines)
    "batch_word_count_files": False,
    "python_files": True,
    "row_api": True,
    "word_count": True,
    "basic_operations": True,
    "state_access": True,
    "list_map_state": True,
    "process_json_data": True,
    "processing_time_timers": True,
    "connected_join": True,
    "partitioning": True,
    "checkpointed_count": True,
    "aggregations": True,
    "file_sink": True,
    "aggregating_state": True,
    "keyed_functions": True,
    "failing_job": True,
    "job_client": False,
    "recovery": True,
    "print_formats": False,
    "batch_word_count": False,
    "row_field_names": True,
    "context_timestamps": True,
    "types_roundtrip": True,
    "job_parameters": True,
    "environment_settings": True,
    "edge_cases": True,
    "side_outputs": False,
    "keyed_side_outputs": False,
    "volume_word_count": True,
    "keyed_co_flat_map": True,
    "types_more": False,
    "event_time": True,
    "end_of_input_timers": True,
    "count_windows": True,
    "broadcast_state": True,
    "async_io": True,
    "custom_window_assigner": False,
    "continuous_trigger": True,
    "cached_stream": True,
    "hybrid_source": True,
    # Table API and SQL (issue 28): PyFlink's bundled table examples and doc-style programs
    "table_process_json_data_with_udf": True,
    "table_multi_sink": False,
    "table_streaming_word_count": True,
    "table_mixing_datastream": True,
    "table_word_count": True,
    "table_process_json_data": True,
    "table_basic_operations": True,
    "table_basic_operations_join": False,
    "table_group_by_updates": True,
    "table_statement_set": False,
    "table_joins": False,
    "table_filesystem": True,
    "table_cdc_formats": True,
    "table_collect_row_kinds": True,
    "table_datagen_print_ddl": True,
    "table_expressions": True,
    "table_batch_group_by": True,
    "table_result_kind": True,
    "table_python_udf_sql": True,
    "table_top_n": True,
    "table_sql_queries": True,
    "table_conversion_from_dataframe": True,
    "table_lateral_and_outer_joins": True,
    "table_api_default_names": True,
    "table_case_string_literals": True,
    "table_value_types": True,
    "table_temporal_functions": True,
    "table_catalog_commands": True,
    "table_sql_window_tvf": True,  # issue 32: event time and windows
    "table_sql_window_hop": False,  # windows ending together fire in Flink's timer-heap order
    "table_deduplication": True,  # PROCTIME() (issue 32)
    "table_group_windows": True,
    "table_sql_group_windows": True,
    "table_sql_window_topn": False,  # windows ending together: Flink's timer-heap order
    "table_over_windows": True,
    "table_stream_conversions": True,  # print_schema of from_data_stream (issue 32)
    "table_sql_window_join": False,  # windows ending together: Flink's timer-heap order
    "table_basic_operations_flat_aggregate": True,
    "table_basic_operations_columns_rows": True,
    "table_mini_batch": True,
    "table_interval_join": True,  # issue 32: prints its joined rows sorted
    "table_temporal_join": True,  # issue 32: prints its joined rows sorted
    "table_async_udf": True,  # issue 32, item 6
    "table_pandas_udf": True,  # issue 32, item 6
    "table_pandas_udaf_windows": True,  # issue 32, item 6
    "table_data_views": True,  # issue 32, item 6: prints final rows
    "table_split_distinct": True,  # issue 32, item 4: split distinct aggregation
    "table_mini_batch_dedup": True,  # issue 32, item 4: mini-batch deduplication
    "table_proctime_windows": True,  # issue 32: processing-time windows (schemas, counts)
    "table_filesystem_partitions": True,  # issue 32, item 5: PARTITIONED BY, _SUCCESS files
    "table_proctime_over": True,  # issue 32: over aggregation on processing time
}

GAPS: dict[str, str] = {
    # name: how flintlock's output differs from PyFlink's (docs/parity.md, "Gaps found")
}

_MODULE_WORD = re.compile(r"\bpyflink\b")


class NotPortableError(Exception):
    """The program names ``pyflink`` outside its import statements."""

    def __init__(self, program: str, line: int) -> None:
        super().__init__(program, line)
        self.program = program
        self.line = line

    def __str__(self) -> str:
        return f"{self.program}:{self.line} names pyflink outside an import statement"


def program_path(name: str) -> Path:
    return PROGRAMS_DIR / f"{name}.py"


def _import_lines(tree: ast.Module) -> set[int]:
    """1-based numbers of the lines that belong to an import of a pyflink module."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        if any(name == "pyflink" or name.startswith("pyflink.") for name in names):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _check_no_other_use(source: str, import_lines: set[int], program: str) -> None:
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for token in tokens:
        if (token.type == tokenize.NAME and token.string == "pyflink"
                and token.start[0] not in import_lines):
            raise NotPortableError(program, token.start[0])


def port_source(source: str, program: str = "<program>") -> str:
    """The program with ``pyflink`` replaced by ``flintlock`` in its import statements only."""
    import_lines = _import_lines(ast.parse(source))
    _check_no_other_use(source, import_lines, program)
    lines = source.splitlines(keepends=True)
    for number in import_lines:
        lines[number - 1] = _MODULE_WORD.sub("flintlock", lines[number - 1])
    return "".join(lines)


def run_ported(name: str, argv: list[str] | None = None) -> None:
    """Runs the ported program as ``__main__``; its output goes to the current ``sys.stdout``."""
    path = program_path(name)
    ported = port_source(path.read_text(encoding="utf-8"), path.name)
    code = compile(ported, str(path), "exec")
    saved_argv = sys.argv
    sys.argv = [str(path), *(argv or [])]
    try:
        exec(code, {"__name__": "__main__", "__file__": str(path), "__builtins__": __builtins__})
    finally:
        sys.argv = saved_argv


@dataclass(frozen=True)
class Expected:
    """What PyFlink printed for one program, and how to compare flintlock's output with it."""

    name: str
    ordered: bool

    def lines(self) -> list[str]:
        text = (EXPECTED_DIR / f"{self.name}.txt").read_text(encoding="utf-8")
        return self.normalize(text)

    def normalize(self, text: str) -> list[str]:
        lines = [line for line in text.splitlines() if line.strip()]
        return lines if self.ordered else sorted(lines)
