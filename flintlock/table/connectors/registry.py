"""The connector registry: ``'connector' = 'x'`` in a table's options → the factory for ``x``.

Contract of a factory (a module-level object registered in ``FACTORIES``)::

    class Factory:
        identifier: str
        def required_options(self) -> set[str]: ...
        def optional_options(self) -> set[str]: ...
        # a source: the DataStream of Rows (values = spec.physical in order, each with a
        # RowKind) on ``context.env``
        def create_source(self, spec: TableSpec, context: ConnectorContext) -> DataStream: ...
        # a sink: consumes ``stream`` (Rows of ``fields``, the query's schema) and returns the
        # DataStreamSink; ``accepts_updates(spec)`` says whether it takes -U/+U/-D rows
        def create_sink(self, stream: DataStream, spec: TableSpec, fields: tuple[Field, ...],
                        context: ConnectorContext) -> Any: ...
        def accepts_updates(self, spec: TableSpec) -> bool: ...
        # optional (Flink's SupportsWatermarkPushDown): the source makes the table's
        # watermarks itself, per split, when create_source gets ``watermark_strategy``
        def supports_watermark_push_down(self, spec: TableSpec) -> bool: ...

Options are checked before planning (``validate``): a missing required option or an unknown
one raises ``ValidationError`` naming it and the factory's options, as Flink does
(``Unsupported options found for 'datagen'``). Runs on the driver.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from typing import Any

from flintlock.datastream.data_stream import DataStream
from flintlock.datastream.stream_execution_environment import StreamExecutionEnvironment
from flintlock.table.errors import ValidationError
from flintlock.table.plan.nodes import Field, PlanNode, TableSpec

FACTORIES: dict[str, Any] = {}
"""identifier -> factory; filled by the factory modules of ``MODULES`` on first use."""

MODULES = {
    "datagen": "flintlock.table.connectors.datagen",
    "print": "flintlock.table.connectors.print_sink",
    "blackhole": "flintlock.table.connectors.blackhole",
    "filesystem": "flintlock.table.connectors.filesystem",
    "kafka": "flintlock.table.connectors.kafka",
    "nexmark": "flintlock.table.connectors.nexmark",
    "jdbc": "flintlock.table.connectors.jdbc",
    "upsert-kafka": "flintlock.table.connectors.upsert_kafka",
}


@dataclass(frozen=True)
class ConnectorContext:
    """What a factory may know of the job it is planned into."""

    env: StreamExecutionEnvironment
    streaming: bool
    parallelism: int
    configuration: Any
    """The table configuration (``flintlock.common.configuration.Configuration``)."""
    local_time_zone: str = "UTC"


def factory(identifier: str | None, table: str) -> Any:
    if identifier is None:
        raise ValidationError(
            f"Table options do not contain an option key 'connector' for discovering a "
            f"connector. Table: {table}")
    found = FACTORIES.get(identifier)
    if found is None and identifier in MODULES:
        importlib.import_module(MODULES[identifier])
        found = FACTORIES.get(identifier)
    if found is None:
        known = sorted(set(FACTORIES) | set(MODULES))
        close = difflib.get_close_matches(identifier, known, n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise ValidationError(
            f"Could not find any factory for identifier '{identifier}' that implements "
            f"'DynamicTableFactory' in the classpath.{hint}\n\nAvailable factory identifiers "
            "are:\n\n" + "\n".join(known))
    return found


def validate(spec: TableSpec) -> Any:
    """The factory of ``spec`` after checking its options; raises ``ValidationError``."""
    found = factory(spec.options.get("connector"), spec.name)
    required = set(found.required_options())
    allowed = required | set(found.optional_options()) | {"connector"}
    missing = sorted(k for k in required if k not in spec.options)
    if missing:
        raise ValidationError(
            "One or more required options are missing.\n\nMissing required options are:\n\n"
            + "\n".join(missing))
    unknown = sorted(k for k in spec.options if k not in allowed and not _dynamic(k, allowed))
    if unknown:
        raise ValidationError(
            f"Unsupported options found for '{spec.options['connector']}'.\n\n"
            "Unsupported options:\n\n" + "\n".join(unknown) + "\n\nSupported options:\n\n"
            + "\n".join(sorted(allowed)))
    return found


def _dynamic(key: str, allowed: set[str]) -> bool:
    """Options with a field name inside (``fields.id.kind``) or a format prefix."""
    return any(pattern.endswith("#") and key.startswith(pattern[:-1]) for pattern in allowed)


class Connectors:
    """What the planner calls to read and write catalog tables."""

    def __init__(self, context: ConnectorContext) -> None:
        self.context = context

    def source(self, env: StreamExecutionEnvironment, spec: TableSpec, translator: Any,
               watermark_strategy: Any = None) -> DataStream:
        """The table's rows; with ``watermark_strategy`` (only where
        ``pushes_watermarks``) with the table's watermarks made in the source, per split."""
        found = validate(spec)
        if watermark_strategy is None:
            return found.create_source(spec, self.context)  # type: ignore[no-any-return]
        return found.create_source(  # type: ignore[no-any-return]
            spec, self.context, watermark_strategy=watermark_strategy)

    def pushes_watermarks(self, spec: TableSpec) -> bool:
        """Whether the table's source makes its watermarks itself (per split)."""
        check = getattr(validate(spec), "supports_watermark_push_down", None)
        return bool(check is not None and check(spec))

    def sink(self, stream: DataStream, spec: TableSpec, query: PlanNode, translator: Any) -> Any:
        return validate(spec).create_sink(stream, spec, query.fields, self.context)

    def accepts_updates(self, spec: TableSpec) -> bool:
        return bool(validate(spec).accepts_updates(spec))


__all__ = ["FACTORIES", "ConnectorContext", "Connectors", "Field", "factory", "validate"]
