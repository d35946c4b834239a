"""The ``print`` table connector: each row as a line on the TaskManager's stdout (or stderr),
as Flink's ``PrintTableSinkFactory`` prints it (``+I[1, abc]``, ``-U[...]``, with the
``identifier:N> `` prefix rules).

Options: ``print-identifier`` (a prefix), ``standard-error`` (``false``: stdout), and
``sink.parallelism`` (the input's parallelism by default). It accepts every row kind.

The sink is a ``PrintSink`` (the one ``DataStream.print()`` uses) whose ``format`` is the Table
layer's line format (``flintlock.table.formatting.print_connector_line``, one module owns
Java's value formatting), so rows take the route every printed record takes: the print
operator writes to the TaskManager's stream, which the TaskManager forwards to the driver's
console. Built on the driver; ``format`` runs on the sink subtask's task thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flintlock.common.operator_spec import PrintSink
from flintlock.table import types as t
from flintlock.table.connectors import registry
from flintlock.table.connectors._options import Options
from flintlock.table.connectors._sinks import sink_fields, sink_parallelism
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import Field, TableSpec


@dataclass(frozen=True)
class TablePrintSink(PrintSink):
    """A print sink for rows of ``row_type`` in the print connector's line format."""

    row_type: Any = None

    def format(self, value: Any, subtask_index: int, parallelism: int,
               output_type: Any = None) -> str:
        from flintlock.table.formatting import print_connector_line

        return print_connector_line(value, self.row_type, self.identifier or "",
                                    subtask_index, parallelism, self.to_stderr)


def row_type_of(fields: tuple[Field, ...]) -> t.RowType:
    return t.RowType([t.RowField(f.name, f.type) for f in fields])


class PrintFactory:
    identifier = "print"

    def required_options(self) -> set[str]:
        return set()

    def optional_options(self) -> set[str]:
        return {"print-identifier", "standard-error", "sink.parallelism"}

    def create_sink(self, stream: Any, spec: TableSpec, fields: tuple[Field, ...],
                    context: registry.ConnectorContext) -> Any:
        options = Options(spec.options)
        sink = TablePrintSink(options.get_str("print-identifier"),
                              options.get_bool("standard-error", False),
                              row_type_of(sink_fields(spec, fields)))
        return stream._add_sink("Sink: print", sink, parallelism=sink_parallelism(spec))

    def accepts_updates(self, spec: TableSpec) -> bool:
        return True

    def create_source(self, spec: TableSpec, context: registry.ConnectorContext) -> Any:
        raise ValidationError(f"Connector '{self.identifier}' can only be used as a sink. It "
                              "cannot be used as a source.")


FACTORY = PrintFactory()
registry.FACTORIES[FACTORY.identifier] = FACTORY

__all__ = ["PrintFactory", "TablePrintSink"]
