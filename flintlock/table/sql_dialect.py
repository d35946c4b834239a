"""PyFlink's ``SqlDialect``: flintlock parses Flink's default dialect (the Hive dialect is
refused with a typed error)."""

import enum

__all__ = ["SqlDialect"]


class SqlDialect(enum.Enum):
    DEFAULT = 0
    HIVE = 1
