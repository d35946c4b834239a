"""The ``blackhole`` table connector: a sink that drops every row (Flink's
``BlackHoleTableSinkFactory``), for benchmarks and for jobs run only for their side effects.

No options besides ``connector``; it accepts every row kind. Its writer keeps no state and does
nothing per batch beyond the call. Built on the driver; the writer runs on the sink subtask's
task thread.
"""

from __future__ import annotations

from typing import Any

from flintlock.datastream.connectors.base import Sink
from flintlock.table.connectors import registry
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import Field, TableSpec


class BlackHoleWriter:
    """The runtime's ``SinkWriter`` that forgets what it is given."""

    def restore(self, state: list[Any]) -> None:
        """Nothing was kept."""

    def write(self, records: list[Any]) -> None:
        """Dropped."""

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        return []

    def commit(self, checkpoint_id: int) -> None:
        """Nothing to publish."""

    def end_input(self) -> None:
        """Nothing to flush."""

    def close(self) -> None:
        """Nothing to release."""


class BlackHoleSink(Sink):
    def create_writer(self, subtask_index: int, parallelism: int) -> BlackHoleWriter:
        return BlackHoleWriter()

    def __repr__(self) -> str:
        return "BlackHoleSink()"


class BlackHoleFactory:
    identifier = "blackhole"

    def required_options(self) -> set[str]:
        return set()

    def optional_options(self) -> set[str]:
        return set()

    def create_sink(self, stream: Any, spec: TableSpec, fields: tuple[Field, ...],
                    context: registry.ConnectorContext) -> Any:
        return stream._add_sink("Sink: blackhole", BlackHoleSink())

    def accepts_updates(self, spec: TableSpec) -> bool:
        return True

    def create_source(self, spec: TableSpec, context: registry.ConnectorContext) -> Any:
        raise ValidationError(f"Connector '{self.identifier}' can only be used as a sink. It "
                              "cannot be used as a source.")


FACTORY = BlackHoleFactory()
registry.FACTORIES[FACTORY.identifier] = FACTORY

__all__ = ["BlackHoleFactory", "BlackHoleSink"]
