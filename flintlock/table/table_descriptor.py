"""PyFlink's ``TableDescriptor`` and ``FormatDescriptor``: a connector table described in code,
the counterpart of ``CREATE TABLE ... WITH (...)``. Immutable once built."""

from __future__ import annotations

from typing import Any

__all__ = ["FormatDescriptor", "TableDescriptor"]


def _option_key(key: Any) -> str:
    return key if isinstance(key, str) else str(getattr(key, "key", key))


def _option_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class TableDescriptor:
    def __init__(self, schema: Any, options: dict[str, str], partition_keys: list[str],
                 comment: str | None) -> None:
        self._schema = schema
        self._options = options
        self._partition_keys = partition_keys
        self._comment = comment

    @staticmethod
    def for_connector(connector: str) -> TableDescriptor.Builder:
        return TableDescriptor.Builder().option("connector", connector)

    def get_schema(self) -> Any:
        return self._schema

    def get_options(self) -> dict[str, str]:
        return dict(self._options)

    def get_partition_keys(self) -> list[str]:
        return list(self._partition_keys)

    def get_comment(self) -> str | None:
        return self._comment

    def __str__(self) -> str:
        schema = f"{self._schema}\n" if self._schema is not None else ""
        comment = f"COMMENT '{self._comment}'\n" if self._comment else ""
        partitions = ", ".join(f"`{k}`" for k in self._partition_keys)
        partitioned = f"PARTITIONED BY ({partitions})\n" if self._partition_keys else ""
        options = ",\n".join(f"  '{k}' = '{v}'" for k, v in self._options.items())
        return f"{schema}{comment}{partitioned}WITH (\n{options}\n)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TableDescriptor) and (
            self._schema, self._options, self._partition_keys, self._comment) == (
            other._schema, other._options, other._partition_keys, other._comment)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._options.items())))

    class Builder:
        def __init__(self) -> None:
            self._schema: Any = None
            self._options: dict[str, str] = {}
            self._partition_keys: list[str] = []
            self._comment: str | None = None

        def schema(self, schema: Any) -> TableDescriptor.Builder:
            self._schema = schema
            return self

        def option(self, key: Any, value: Any) -> TableDescriptor.Builder:
            self._options[_option_key(key)] = _option_value(value)
            return self

        def format(self, format: Any, format_option: Any = None
                   ) -> TableDescriptor.Builder:
            prefix = "format" if format_option is None else _option_key(format_option)
            if isinstance(format, str):
                self._options[prefix] = format
                return self
            identifier = format.get_format()
            self._options[prefix] = identifier
            for key, value in format.get_options().items():
                self._options[f"{identifier}.{key}"] = value
            return self

        def partitioned_by(self, *partition_keys: str) -> TableDescriptor.Builder:
            self._partition_keys = list(partition_keys)
            return self

        def comment(self, comment: str) -> TableDescriptor.Builder:
            self._comment = comment
            return self

        def build(self) -> TableDescriptor:
            return TableDescriptor(self._schema, dict(self._options),
                                   list(self._partition_keys), self._comment)


class FormatDescriptor:
    def __init__(self, format: str, options: dict[str, str]) -> None:
        self._format = format
        self._options = options

    @staticmethod
    def for_format(format: str) -> FormatDescriptor.Builder:
        return FormatDescriptor.Builder(format)

    def get_format(self) -> str:
        return self._format

    def get_options(self) -> dict[str, str]:
        return dict(self._options)

    def __str__(self) -> str:
        options = ", ".join(f"'{k}' = '{v}'" for k, v in self._options.items())
        return f"{self._format}[{options}]"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FormatDescriptor) and (self._format, self._options) == (
            other._format, other._options)

    def __hash__(self) -> int:
        return hash((self._format, tuple(sorted(self._options.items()))))

    class Builder:
        def __init__(self, format: str) -> None:
            self._format = format
            self._options: dict[str, str] = {}

        def option(self, key: Any, value: Any) -> FormatDescriptor.Builder:
            self._options[_option_key(key)] = _option_value(value)
            return self

        def build(self) -> FormatDescriptor:
            return FormatDescriptor(self._format, dict(self._options))
