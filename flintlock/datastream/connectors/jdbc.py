"""PyFlink's ``pyflink.datastream.connectors.jdbc``: ``JdbcSink``, ``JdbcConnectionOptions``,
``JdbcExecutionOptions``, writing a stream into PostgreSQL through psycopg 3 (the ``jdbc``
extra).

    ds.add_sink(JdbcSink.sink(
        "INSERT INTO books (id, title) VALUES (?, ?)",
        Types.ROW([Types.INT(), Types.STRING()]),
        JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
            .with_url("jdbc:postgresql://127.0.0.1:5432/db")
            .with_user_name("u").with_password("p").build(),
        JdbcExecutionOptions.builder().with_batch_size(1000).build()))

``JdbcSink.sink`` is at-least-once, as in Flink: batches are committed when full, after the
batch interval, at every checkpoint and at the end of the input; a checkpoint completes only
after its batch is committed. ``JdbcSink.exactly_once_sink`` (the counterpart of Java's
``JdbcSink.exactlyOnceSink``, which PyFlink does not wrap) commits each checkpoint's records
in one PostgreSQL transaction, prepared at the checkpoint and committed when it completes
(``_jdbc_sink.TwoPhaseWriter``). The ``sql`` takes JDBC's ``?`` markers, filled with the
record's fields in order (a ``Row`` or a tuple; any other record is one parameter).

Only PostgreSQL URLs are accepted (``_jdbc.parse_url``); the driver name is recorded and
otherwise ignored. The objects are values built on the driver and pickled into the job; the
writers run on the sink's task threads.
"""

from __future__ import annotations

import uuid
from typing import Any

from flintlock.common.typeinfo import RowTypeInfo, TupleTypeInfo
from flintlock.datastream.connectors._jdbc import ConnectionSpec, parse_url
from flintlock.datastream.connectors._jdbc_sink import (
    BatchWriter,
    ExecutionSettings,
    SimpleStatements,
    TwoPhaseWriter,
)
from flintlock.datastream.connectors.base import Sink

__all__ = ["JdbcConnectionOptions", "JdbcExecutionOptions", "JdbcSink"]


def _parameters(record: Any) -> tuple[Any, ...]:
    if isinstance(record, tuple):
        return record
    try:
        return tuple(record)
    except TypeError:
        return (record,)


class JdbcSink(Sink):
    """A sink writing each record with one parameterized SQL statement."""

    def __init__(self, sql: str, connection: JdbcConnectionOptions,
                 execution: JdbcExecutionOptions, exactly_once: bool) -> None:
        self._sql = sql
        self._connection = connection
        self._execution = execution
        self._exactly_once = exactly_once
        self._sink_id = f"flintlock-jdbc-{uuid.uuid4().hex}"  # the same in every attempt

    @staticmethod
    def sink(sql: str, type_info: RowTypeInfo, jdbc_connection_options: JdbcConnectionOptions,
             jdbc_execution_options: JdbcExecutionOptions | None = None) -> JdbcSink:
        """An at-least-once sink running ``sql`` (with ``?`` markers) for every record."""
        _check_arguments(sql, type_info, jdbc_connection_options)
        return JdbcSink(sql, jdbc_connection_options,
                        jdbc_execution_options or JdbcExecutionOptions.defaults(), False)

    @staticmethod
    def exactly_once_sink(sql: str, type_info: RowTypeInfo,
                          jdbc_connection_options: JdbcConnectionOptions,
                          jdbc_execution_options: JdbcExecutionOptions | None = None
                          ) -> JdbcSink:
        """An exactly-once sink on PostgreSQL's two-phase commit: each checkpoint's records
        become visible together when the checkpoint completes. The server needs
        ``max_prepared_transactions`` > 0."""
        _check_arguments(sql, type_info, jdbc_connection_options)
        return JdbcSink(sql, jdbc_connection_options,
                        jdbc_execution_options or JdbcExecutionOptions.defaults(), True)

    def create_writer(self, subtask_index: int, parallelism: int) -> Any:
        """The runtime's entry point (``flintlock.runtime.tasks.sinks``)."""
        options = self._execution
        settings = ExecutionSettings(options.get_batch_size(), options.get_batch_interval_ms(),
                                     options.get_max_retries())
        statements = SimpleStatements(self._sql, _parameters)
        spec = self._connection._spec
        if self._exactly_once:
            return TwoPhaseWriter(spec, statements, self._sink_id, subtask_index, settings)
        return BatchWriter(spec, statements, settings)


def _check_arguments(sql: str, type_info: Any, options: Any) -> None:
    if not isinstance(sql, str) or not sql.strip():
        raise ValueError("the JDBC sink's sql must be a non-empty statement")
    if type_info is not None and not isinstance(type_info, (RowTypeInfo, TupleTypeInfo)):
        raise TypeError(f"type_info must be a RowTypeInfo (Types.ROW([...])), got {type_info!r}")
    if not isinstance(options, JdbcConnectionOptions):
        raise TypeError("jdbc_connection_options must be built with "
                        "JdbcConnectionOptions.JdbcConnectionOptionsBuilder()")


class JdbcConnectionOptions:
    """Where the sink connects: URL, driver name, user, password."""

    def __init__(self, url: str, driver_name: str | None, user_name: str | None,
                 password: str | None) -> None:
        parse_url(url)  # refuses a URL flintlock cannot use, on the driver
        self._url = url
        self._driver_name = driver_name
        self._spec = ConnectionSpec(url, user_name, password)

    def get_db_url(self) -> str:
        return self._url

    def get_driver_name(self) -> str | None:
        return self._driver_name

    def get_user_name(self) -> str | None:
        return self._spec.user

    def get_password(self) -> str | None:
        return self._spec.password

    class JdbcConnectionOptionsBuilder:
        def __init__(self) -> None:
            self._url: str | None = None
            self._driver_name: str | None = None
            self._user_name: str | None = None
            self._password: str | None = None

        def with_url(self, url: str) -> JdbcConnectionOptions.JdbcConnectionOptionsBuilder:
            self._url = url
            return self

        def with_driver_name(self, driver_name: str
                             ) -> JdbcConnectionOptions.JdbcConnectionOptionsBuilder:
            self._driver_name = driver_name
            return self

        def with_user_name(self, user_name: str
                           ) -> JdbcConnectionOptions.JdbcConnectionOptionsBuilder:
            self._user_name = user_name
            return self

        def with_password(self, password: str
                          ) -> JdbcConnectionOptions.JdbcConnectionOptionsBuilder:
            self._password = password
            return self

        def build(self) -> JdbcConnectionOptions:
            if self._url is None:
                raise ValueError("jdbc url is empty")  # Flink's message
            return JdbcConnectionOptions(self._url, self._driver_name, self._user_name,
                                         self._password)


class JdbcExecutionOptions:
    """Batching and retries of the sink (Flink's defaults: 5000 rows, no interval, 3 retries)."""

    def __init__(self, batch_interval_ms: int, batch_size: int, max_retries: int) -> None:
        self._batch_interval_ms = batch_interval_ms
        self._batch_size = batch_size
        self._max_retries = max_retries

    def get_batch_interval_ms(self) -> int:
        return self._batch_interval_ms

    def get_batch_size(self) -> int:
        return self._batch_size

    def get_max_retries(self) -> int:
        return self._max_retries

    @staticmethod
    def defaults() -> JdbcExecutionOptions:
        return JdbcExecutionOptions.builder().build()

    @staticmethod
    def builder() -> JdbcExecutionOptions.Builder:
        return JdbcExecutionOptions.Builder()

    class Builder:
        def __init__(self) -> None:
            self._interval_ms = 0
            self._size = 5000
            self._max_retries = 3

        def with_batch_size(self, size: int) -> JdbcExecutionOptions.Builder:
            if size <= 0:
                raise ValueError(f"batch size must be positive, got {size}")
            self._size = size
            return self

        def with_batch_interval_ms(self, interval_ms: int) -> JdbcExecutionOptions.Builder:
            if interval_ms < 0:
                raise ValueError(f"batch interval must not be negative, got {interval_ms}")
            self._interval_ms = interval_ms
            return self

        def with_max_retries(self, max_retries: int) -> JdbcExecutionOptions.Builder:
            if max_retries < 0:
                raise ValueError(f"max retries must not be negative, got {max_retries}")
            self._max_retries = max_retries
            return self

        def build(self) -> JdbcExecutionOptions:
            return JdbcExecutionOptions(self._interval_ms, self._size, self._max_retries)
