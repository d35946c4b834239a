"""PyFlink's ``TableConfig``: the configuration of a ``TableEnvironment``, a view over one
``Configuration`` that the jobs it plans are submitted with (``parallelism.default``,
checkpoint and restart keys, ``table.*`` keys). Keys are validated as everywhere in flintlock:
an unknown key is refused with the nearest known ones."""

from __future__ import annotations

import datetime
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.options import table as table_options

__all__ = ["TableConfig"]


class TableConfig:
    def __init__(self, configuration: Configuration | None = None) -> None:
        self._configuration = configuration if configuration is not None else Configuration()

    def get(self, key: str, default_value: Any = None) -> Any:
        return self._configuration.get_string(key, default_value)

    def set(self, key: str, value: str) -> TableConfig:
        self._configuration.set_string(key, str(value))
        return self

    def get_local_timezone(self) -> str:
        return str(self._configuration.get(table_options.LOCAL_TIME_ZONE))

    def set_local_timezone(self, timezone_id: str) -> None:
        self._configuration.set_string(table_options.LOCAL_TIME_ZONE.key, timezone_id)

    def get_max_generated_code_length(self) -> int:
        return 4000

    def set_max_generated_code_length(self, max_generated_code_length: int) -> None:
        """Accepted for PyFlink programs; flintlock's compiled expressions have no limit."""

    def set_idle_state_retention(self, duration: datetime.timedelta) -> None:
        millis = int(duration.total_seconds() * 1000)
        self._configuration.set_string(table_options.STATE_TTL.key, f"{millis} ms")

    def get_idle_state_retention(self) -> datetime.timedelta:
        return datetime.timedelta(
            milliseconds=self._configuration.get(table_options.STATE_TTL))

    def get_configuration(self) -> Configuration:
        return self._configuration

    def add_configuration(self, configuration: Configuration) -> None:
        self._configuration.add_all(configuration)

    def to_map(self) -> dict[str, str]:
        return self._configuration.to_dict()

    def get_sql_dialect(self) -> Any:
        from flintlock.table.sql_dialect import SqlDialect

        return SqlDialect.DEFAULT

    def set_sql_dialect(self, sql_dialect: Any) -> None:
        from flintlock.table.sql_dialect import SqlDialect

        if sql_dialect is not SqlDialect.DEFAULT:
            from flintlock.table.errors import UnsupportedFeatureError

            raise UnsupportedFeatureError(f"the {sql_dialect.name} SQL dialect")

    def set_python_executable(self, python_exec: str) -> None:
        self._configuration.set_string("python.executable", python_exec)

    def get_python_executable(self) -> str | None:
        return self._configuration.get_string("python.executable", None)

    @staticmethod
    def get_default() -> TableConfig:
        return TableConfig()
