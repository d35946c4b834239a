"""``DESCRIBE t``: its result rows and its printed table, as PyFlink 2.3.0 shows them.

One row per column: ``name``, ``type`` (the summary type without NOT NULL, with ``*ROWTIME*``
/ ``*PROCTIME*``), ``null`` (whether the type admits NULL), ``key`` (``PRI(id, k)`` on every
column of the primary key), ``extras`` (``AS <expression>`` or ``METADATA FROM 'key'
VIRTUAL``), ``watermark`` (the watermark expression on the rowtime column) and, only when some
column has a comment, ``comment``. Absent values are None in ``collect()`` and empty cells in
``print()``, which uses the batch layout without a width cap and shows booleans as
``TRUE``/``FALSE`` (tests/table/fixtures/types_schema.txt, "describe" cases).

Pure functions; no state.
"""

from __future__ import annotations

from flintlock.common.types import Row
from flintlock.table.formatting.tableau import render_cells
from flintlock.table.resolved_schema import ResolvedSchema
from flintlock.table.types import DataType, DataTypes

_COLUMNS = ["name", "type", "null", "key", "extras", "watermark"]


def describe_columns(schema: ResolvedSchema) -> list[tuple[str, DataType]]:
    """The result's column names and types."""
    names = list(_COLUMNS)
    if any(column.comment is not None for column in schema.columns):
        names.append("comment")
    types = {"null": DataTypes.BOOLEAN(False), "name": DataTypes.STRING(False),
             "type": DataTypes.STRING(False)}
    return [(name, types.get(name, DataTypes.STRING())) for name in names]


def describe_rows(schema: ResolvedSchema) -> list[Row]:
    """One ``Row`` per column of ``schema`` (module docstring)."""
    key = schema.primary_key
    key_text = None if key is None else "PRI(" + ", ".join(key.columns) + ")"
    watermarks = {spec.rowtime_attribute: spec.expression_sql for spec in schema.watermark_specs}
    with_comment = any(column.comment is not None for column in schema.columns)
    rows = []
    for column in schema.columns:
        values = [column.name, column.type_summary(with_nullability=False),
                  bool(column.data_type._nullable),
                  key_text if key is not None and column.name in key.columns else None,
                  column.explain_extras(), watermarks.get(column.name)]
        if with_comment:
            values.append(column.comment)
        rows.append(Row(*values))
    return rows


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(value)


def render_describe(schema: ResolvedSchema) -> str:
    """``execute_sql('DESCRIBE t').print()``'s text."""
    names = [name for name, _ in describe_columns(schema)]
    cells = [[_cell(value) for value in row] for row in describe_rows(schema)]
    return render_cells(names, cells, max_column_width=None)
